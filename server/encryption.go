package server

import (
	"bytes"
	"context"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"platd/bolt"
	"platd/config"
	"platd/security/encrypt"
)

// DefaultEncryptionConfigReloadInterval is how often
// --encryption-provider-config-automatic-reload re-reads the file, as
// upstream's controller does.
const DefaultEncryptionConfigReloadInterval = time.Minute

// storeTransformer is the engine's value transformer for
// --encryption-provider-config, with its operations counted under
// upstream's metric; nil without the flag, so the engine's write and load
// paths stay as they were. Encryption is a storage concern: the engine
// applies it where values meet the file, so memory, reads and watches are
// untouched (see bolt.Transformer).
func (s *Server) storeTransformer() (bolt.Transformer, error) {
	cfg := s.opts.Encryption
	if cfg == nil {
		return nil, nil
	}
	ops := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_storage_transformation_operations_total",
		Help: "Total number of transformations of stored values, by direction (to_storage encrypts, from_storage decrypts), resource, provider prefix and status ('OK' or the failure).",
	}, []string{"resource", "transformation_type", "transformer_prefix", "status"})
	s.metrics.MustRegister(ops)
	t, err := encrypt.New(cfg, s.opts.Brand, func(op, resource, prefix string, err error) {
		status := "OK"
		if err != nil {
			status = "Unknown"
		}
		ops.WithLabelValues(resource, op, prefix, status).Inc()
	})
	if err != nil {
		return nil, err
	}
	s.encryption = t
	return t, nil
}

// startEncryptionReload re-reads the encryption configuration file on a
// timer when --encryption-provider-config-automatic-reload asks for it,
// until ctx ends.
func (s *Server) startEncryptionReload(ctx context.Context) {
	o := s.opts
	if !o.EncryptionConfigReload || s.encryption == nil {
		return
	}
	interval := o.EncryptionConfigReloadInterval
	if interval <= 0 {
		interval = DefaultEncryptionConfigReloadInterval
	}
	labels := []string{"status", "apiserver_id_hash"}
	reloads := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_encryption_config_controller_automatic_reloads_total",
		Help: "Total number of reload attempts of the encryption configuration, by status and apiserver identity.",
	}, labels)
	last := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds",
		Help: "Timestamp of the last reload attempt of the encryption configuration, by status and apiserver identity.",
	}, labels)
	s.metrics.MustRegister(reloads, last)
	id := apiserverIDHash()
	seen, _ := os.ReadFile(o.EncryptionProviderConfigFile)
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			data, err := os.ReadFile(o.EncryptionProviderConfigFile)
			if err == nil && bytes.Equal(data, seen) {
				continue
			}
			status := "success"
			if err := s.reloadEncryption(); err != nil {
				status = "failure"
				s.log.Error("encryption configuration reload", "file", o.EncryptionProviderConfigFile, "err", err)
			} else {
				s.log.Info("encryption configuration reloaded", "file", o.EncryptionProviderConfigFile)
			}
			// A bad file is counted once, not at every tick.
			seen = data
			reloads.WithLabelValues(status, id).Inc()
			last.WithLabelValues(status, id).SetToCurrentTime()
		}
	}()
}

// reloadEncryption applies the file's current content: later writes use
// its first providers, and values their keys would now write differently
// are marked so an unchanged update rewrites them. Values of keys the file
// dropped stay readable until the next start (memory holds them plain);
// after it they are corrupt objects.
func (s *Server) reloadEncryption() error {
	cfg, err := config.LoadEncryptionConfig(s.opts.EncryptionProviderConfigFile, s.opts.Brand)
	if err != nil {
		return err
	}
	if err := s.encryption.Swap(cfg); err != nil {
		return err
	}
	if ss, ok := s.store.(staleStore); ok {
		return ss.RecheckStale(s.encryption.StaleStored)
	}
	return nil
}
