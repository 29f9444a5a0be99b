package security

import (
	"crypto/sha256"
	"encoding/hex"
	"sync/atomic"
	"time"
)

// JWTIssuerStats counts the verifications of one issuer's tokens, for the
// JWT authenticator latency metric of /metrics (result success or
// failure, labelled by the issuer's hash). Tokens of other issuers are not
// counted.
type JWTIssuerStats struct {
	Issuer string
	// IssuerHash is the metric's label: "sha256:" and the hex SHA-256 of
	// Issuer, so URLs do not leak into metrics.
	IssuerHash       string
	Success, Failure uint64
	// SuccessTime and FailureTime are the summed verification times.
	SuccessTime, FailureTime time.Duration
}

// jwtCounters are updated without locks on the request path.
type jwtCounters struct {
	success, failure        atomic.Uint64
	successNanos, failNanos atomic.Int64
}

func (c *jwtCounters) record(ok bool, d time.Duration) {
	if ok {
		c.success.Add(1)
		c.successNanos.Add(int64(d))
		return
	}
	c.failure.Add(1)
	c.failNanos.Add(int64(d))
}

func issuerHash(issuer string) string {
	sum := sha256.Sum256([]byte(issuer))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// IssuerStats returns the counters of every authenticator of the current
// set; a reload starts new counters for the new set.
func (s *JWTAuthenticators) IssuerStats() []JWTIssuerStats {
	var out []JWTIssuerStats
	for _, a := range s.cur.Load().auths {
		c := &a.counters
		out = append(out, JWTIssuerStats{
			Issuer: a.cfg.Issuer.URL, IssuerHash: issuerHash(a.cfg.Issuer.URL),
			Success: c.success.Load(), Failure: c.failure.Load(),
			SuccessTime: time.Duration(c.successNanos.Load()), FailureTime: time.Duration(c.failNanos.Load()),
		})
	}
	return out
}
