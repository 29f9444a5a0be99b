package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"platd/bolt"
	"platd/security/encrypt"
)

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
	return encrypt.New(cfg, s.opts.Brand, func(op, resource, prefix string, err error) {
		status := "OK"
		if err != nil {
			status = "Unknown"
		}
		ops.WithLabelValues(resource, op, prefix, status).Inc()
	})
}
