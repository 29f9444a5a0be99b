package security

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"platd/config"
)

// DefaultAuthnConfigReloadInterval is how often --authentication-config is
// re-read: upstream's minute. The file is small, so each tick reads and
// hashes it instead of trusting modification times, which miss a rewrite
// within the file system's time granularity and are changed by the
// symlink swaps of mounted configuration volumes.
const DefaultAuthnConfigReloadInterval = time.Minute

// authnConfigUpdateTimeout is how long a reloaded configuration's issuers
// get to answer discovery before the reload counts as failed and the old
// configuration stays: a new set is swapped in only when it can serve.
const authnConfigUpdateTimeout = 10 * time.Second

// authnConfigHealthPoll is how often a reloaded set's readiness is checked.
const authnConfigHealthPoll = 50 * time.Millisecond

// JWTAuthenticators is the live set of JWT authenticators, one per jwt
// entry, tried in order. A reload swaps the whole set atomically. Safe for
// concurrent use.
type JWTAuthenticators struct {
	opts JWTOptions
	path string
	log  *slog.Logger

	cur atomic.Pointer[jwtSet]

	// reloadMu serializes Start and reloads and guards hash and baseCtx;
	// statsMu guards stats, so reading them never waits for a reload.
	reloadMu sync.Mutex
	hash     [sha256.Size]byte
	baseCtx  context.Context
	statsMu  sync.Mutex
	stats    ReloadStats
	// updateTimeout is authnConfigUpdateTimeout; tests shorten it.
	updateTimeout time.Duration
}

type jwtSet struct {
	auths  []*JWTAuthenticator
	cancel context.CancelFunc
}

// ReloadStats counts reloads of the configuration file, for /metrics.
type ReloadStats struct {
	Success, Failure         uint64
	LastSuccess, LastFailure time.Time
}

// NewJWTAuthenticatorsFromFlags builds the one authenticator the --oidc-*
// flags describe. It is never reloaded.
func NewJWTAuthenticatorsFromFlags(f config.OIDCFlags, o JWTOptions, log *slog.Logger) (*JWTAuthenticators, error) {
	entry, err := f.JWTAuthenticator()
	if err != nil {
		return nil, err
	}
	o.SigningAlgs = f.Algorithms()
	auths, err := BuildJWTAuthenticators(&config.AuthenticationConfiguration{JWT: []config.JWTAuthenticator{entry}}, o)
	if err != nil {
		return nil, err
	}
	s := &JWTAuthenticators{opts: o, log: log}
	s.cur.Store(&jwtSet{auths: auths})
	return s, nil
}

// NewJWTAuthenticatorsFromFile builds the authenticators of an
// authentication configuration file. An invalid file is an error here;
// after Start, an invalid new content is logged and the old set kept.
func NewJWTAuthenticatorsFromFile(path string, o JWTOptions, log *slog.Logger) (*JWTAuthenticators, error) {
	s := &JWTAuthenticators{opts: o, path: path, log: log}
	set, hash, err := s.load()
	if err != nil {
		return nil, err
	}
	s.hash = hash
	s.cur.Store(set)
	return s, nil
}

func (s *JWTAuthenticators) load() (*jwtSet, [sha256.Size]byte, error) {
	c, data, err := config.LoadAuthenticationConfig(s.path, s.opts.Brand)
	hash := sha256.Sum256(data)
	if err != nil {
		return nil, hash, err
	}
	auths, err := BuildJWTAuthenticators(c, s.opts)
	if err != nil {
		var ferrs config.FieldErrors
		if errors.As(err, &ferrs) {
			return nil, hash, fmt.Errorf("%w: %s: invalid authentication config: %w", config.ErrAuthenticationConfig, s.path, ferrs)
		}
		return nil, hash, err
	}
	return &jwtSet{auths: auths}, hash, nil
}

// Start begins discovery for every authenticator and, for a file, checks
// it for changes every interval (DefaultAuthnConfigReloadInterval when 0)
// until ctx ends.
func (s *JWTAuthenticators) Start(ctx context.Context, interval time.Duration) {
	s.reloadMu.Lock()
	s.baseCtx = ctx
	s.startSet(s.cur.Load())
	s.reloadMu.Unlock()
	if s.path == "" {
		return
	}
	if interval <= 0 {
		interval = DefaultAuthnConfigReloadInterval
	}
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.Reload()
			}
		}
	}()
}

// startSet runs set's discovery under a context of its own, cancelled when
// the set is replaced. Called with s.reloadMu held.
func (s *JWTAuthenticators) startSet(set *jwtSet) {
	ctx, cancel := context.WithCancel(s.baseCtx)
	set.cancel = cancel
	for _, a := range set.auths {
		a.Start(ctx)
	}
}

// Reload re-reads the file; unchanged content is a no-op. New content is
// validated, built and its issuers discovered before it replaces the old
// set. It returns the error that kept the old configuration, if any; the
// same content is tried again at the next check, as upstream.
func (s *JWTAuthenticators) Reload() error {
	if s.path == "" {
		return nil
	}
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	data, err := os.ReadFile(s.path)
	if err == nil && sha256.Sum256(data) == s.hash {
		return nil
	}
	set, hash, err := s.load()
	if err == nil && s.baseCtx != nil {
		s.startSet(set)
		if err = set.waitHealthy(s.baseCtx, s.updateTimeout); err != nil {
			set.cancel()
		}
	}
	if err != nil {
		s.record(false)
		s.log.Error("authentication config reload failed, keeping the previous configuration", "path", s.path, "err", err)
		return err
	}
	s.hash = hash
	old := s.cur.Swap(set)
	if old != nil && old.cancel != nil {
		old.cancel()
	}
	s.record(true)
	s.log.Info("authentication config reloaded", "path", s.path, "jwt", len(set.auths))
	return nil
}

// waitHealthy waits until every issuer of set answered discovery, at most
// timeout (authnConfigUpdateTimeout when 0).
func (set *jwtSet) waitHealthy(ctx context.Context, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = authnConfigUpdateTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(authnConfigHealthPoll)
	defer t.Stop()
	for {
		var err error
		for _, a := range set.auths {
			if err = a.Healthy(); err != nil {
				break
			}
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-t.C:
		}
	}
}

func (s *JWTAuthenticators) record(ok bool) {
	now := time.Now()
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	if ok {
		s.stats.Success++
		s.stats.LastSuccess = now
	} else {
		s.stats.Failure++
		s.stats.LastFailure = now
	}
}

// Stats returns the reload counters.
func (s *JWTAuthenticators) Stats() ReloadStats {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	return s.stats
}

// Healthy reports the first authenticator whose discovery has not
// succeeded yet.
func (s *JWTAuthenticators) Healthy() error {
	for _, a := range s.cur.Load().auths {
		if err := a.Healthy(); err != nil {
			return err
		}
	}
	return nil
}

// AuthenticateToken tries each authenticator of the current set; the first
// that accepts the token wins, the errors of the others are joined.
func (s *JWTAuthenticators) AuthenticateToken(ctx context.Context, token string) (*User, bool, error) {
	var errs []error
	for _, a := range s.cur.Load().auths {
		u, ok, err := a.AuthenticateToken(ctx, token)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return u, true, nil
		}
	}
	return nil, false, errors.Join(errs...)
}
