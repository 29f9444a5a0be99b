package controllers

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"time"

	"platd/bolt"
	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
)

// csrSigningRetryDelay is how long a failed signature or status write
// waits before the next attempt.
const csrSigningRetryDelay = time.Second

// minRequestedTTL is the shortest validity a request's
// spec.expirationSeconds gets: twice the backdating of its start, so
// that no certificate is born expired for a lagging clock (upstream's).
const minRequestedTTL = 10 * time.Minute

// SignerRule is what a request to one signer must be; its error is the
// message of the request's Failed condition.
type SignerRule func(req *x509.CertificateRequest, usages []string) error

// CSRSigning issues the certificates of approved CertificateSigningRequests
// to the signers the server's CA stands for, as upstream's controller
// manager does with its cluster signing CA: a request approved, neither
// denied nor failed, without a certificate, and for one of Signers gets
// a certificate of CA (security.SignRequest) valid for its
// spec.expirationSeconds, at least ten minutes and at most TTL; one
// breaking its signer's rule gets a Failed condition with reason
// SignerValidationFailure instead.
type CSRSigning struct {
	Source   Source
	Objects  Objects
	Requests *registry.Descriptor
	// Signers maps each signer name signed for to its rule.
	Signers map[string]SignerRule
	CA      *security.CA
	TTL     time.Duration
	// Now is the clock of the certificates and conditions (nil:
	// time.Now).
	Now func() time.Time
	Log *slog.Logger

	queue *queue
}

// Run works until ctx ends and returns once its goroutines have stopped.
func (c *CSRSigning) Run(ctx context.Context) {
	c.queue = newQueue()
	c.queue.workWhile(ctx, c.Log, csrSigningRetryDelay, c.sync, func() {
		follow(ctx, c.Source, c.Requests.Prefix(""), c.Log, asPuts(c.observe), c.observe)
	})
}

func (c *CSRSigning) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// signingRequest is the part of a CertificateSigningRequest the signing,
// approving and cleaning controllers read.
type signingRequest struct {
	Metadata struct {
		Name              string `json:"name"`
		UID               string `json:"uid"`
		CreationTimestamp string `json:"creationTimestamp"`
	} `json:"metadata"`
	Spec struct {
		Request           []byte              `json:"request"`
		SignerName        string              `json:"signerName"`
		Usages            []string            `json:"usages"`
		ExpirationSeconds *int64              `json:"expirationSeconds"`
		Username          string              `json:"username"`
		UID               string              `json:"uid"`
		Groups            []string            `json:"groups"`
		Extra             map[string][]string `json:"extra"`
	} `json:"spec"`
	Status struct {
		Certificate []byte `json:"certificate"`
		Conditions  []struct {
			Type           string `json:"type"`
			Status         string `json:"status"`
			LastUpdateTime string `json:"lastUpdateTime"`
		} `json:"conditions"`
	} `json:"status"`
}

// decodeSigningRequest reads a served CertificateSigningRequest.
func decodeSigningRequest(obj registry.Object) (*signingRequest, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var r signingRequest
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// x509Request parses the request's PEM, with upstream's errors.
func (r *signingRequest) x509Request() (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(r.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, fmt.Errorf("unable to parse csr %q: PEM block type must be CERTIFICATE REQUEST", r.Metadata.Name)
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("unable to parse csr %q: %v", r.Metadata.Name, err)
	}
	return req, nil
}

// pending reports whether the request waits for its certificate: it has
// none, it is approved and not denied (whatever the conditions' status,
// as upstream reads them), no Failed condition is true, and c signs for
// its signer.
func (c *CSRSigning) pending(r *signingRequest) bool {
	if len(r.Status.Certificate) > 0 || c.Signers[r.Spec.SignerName] == nil {
		return false
	}
	approved, denied, failed := false, false, false
	for _, cond := range r.Status.Conditions {
		switch cond.Type {
		case "Approved":
			approved = true
		case "Denied":
			denied = true
		case "Failed":
			failed = failed || cond.Status == "True"
		}
	}
	return approved && !denied && !failed
}

// observe queues a request that waits for its certificate.
func (c *CSRSigning) observe(ev bolt.Event) {
	r, name, err := signingRequestEvent(ev)
	if err != nil {
		c.Log.Warn("certificate signing", "err", err)
		return
	}
	if r != nil && c.pending(r) {
		c.queue.add(name)
	}
}

// signingRequestEvent reads the request of a watch event: after a put,
// the request and its name; after a delete, no request and the name the
// deleted one had ("" when its last state is not known).
func signingRequestEvent(ev bolt.Event) (*signingRequest, string, error) {
	if ev.Type != bolt.Put {
		var gone signingRequest
		if ev.Prev == nil || json.Unmarshal(ev.Prev.Value, &gone) != nil {
			return nil, "", nil
		}
		return nil, gone.Metadata.Name, nil
	}
	var r signingRequest
	if err := json.Unmarshal(ev.KV.Value, &r); err != nil {
		return nil, "", fmt.Errorf("unreadable CertificateSigningRequest %s: %w", ev.KV.Key, err)
	}
	return &r, r.Metadata.Name, nil
}

// readSigningRequest returns the request called name as stored now, nil
// when it is gone.
func readSigningRequest(objs Objects, d *registry.Descriptor, name string) (*signingRequest, error) {
	obj, err := objs.Get(d, "", name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := decodeSigningRequest(obj)
	if err != nil {
		return nil, fmt.Errorf("CertificateSigningRequest %s: %w", name, err)
	}
	return r, nil
}

// sync signs the request called name, or marks it failed, when it still
// waits for its certificate.
func (c *CSRSigning) sync(ctx context.Context, name string) error {
	r, err := readSigningRequest(c.Objects, c.Requests, name)
	if err != nil {
		return err
	}
	if r == nil || !c.pending(r) {
		return nil
	}
	req, err := r.x509Request()
	if err != nil {
		return err
	}
	now := c.now()
	if rerr := c.Signers[r.Spec.SignerName](req, r.Spec.Usages); rerr != nil {
		return c.writeStatus(ctx, name, func(status map[string]any) {
			conds, _ := status["conditions"].([]any)
			status["conditions"] = append(conds, map[string]any{"type": "Failed", "status": "True",
				"reason": "SignerValidationFailure", "message": rerr.Error(), "lastUpdateTime": now.UTC().Format(time.RFC3339)})
		})
	}
	cert, err := c.CA.SignRequest(req, r.Spec.Usages, c.ttl(r.Spec.ExpirationSeconds), now)
	if err != nil {
		return fmt.Errorf("error auto signing csr: %v", err)
	}
	return c.writeStatus(ctx, name, func(status map[string]any) {
		status["certificate"] = base64.StdEncoding.EncodeToString(cert)
	})
}

// ttl is the validity of a request's certificate: what it asks for
// within [minRequestedTTL, c.TTL], c.TTL when it asks for nothing.
func (c *CSRSigning) ttl(expirationSeconds *int64) time.Duration {
	if expirationSeconds == nil {
		return c.TTL
	}
	switch d := time.Duration(*expirationSeconds) * time.Second; {
	case d > c.TTL:
		return c.TTL
	case d < minRequestedTTL:
		return minRequestedTTL
	default:
		return d
	}
}

// writeStatus changes the status of the request called name with set,
// as long as it still waits for its certificate.
func (c *CSRSigning) writeStatus(ctx context.Context, name string, set func(status map[string]any)) error {
	_, err := c.Objects.Update(ctx, c.Requests, "", name, "status", func(cur registry.Object) registry.Object {
		if r, err := decodeSigningRequest(cur); err != nil || !c.pending(r) {
			return nil
		}
		set(child(cur, "status"))
		return cur
	})
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("CertificateSigningRequest %s: writing its status: %w", name, err)
	}
	return nil
}
