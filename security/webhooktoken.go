package security

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"platd/config"
)

// webhookTimeout bounds one call to a token webhook, as upstream's client
// does: a hung webhook must not hold requests forever.
const webhookTimeout = 30 * time.Second

// maxWebhookResponse bounds the TokenReview a webhook may answer with; a
// review is a few kilobytes, and a larger answer is a broken webhook.
const maxWebhookResponse = 3 << 20

// Backoff is a retry schedule: Steps attempts in all, the first wait
// Initial, each next wait Factor times longer, each stretched by up to
// Jitter of itself at random.
type Backoff struct {
	Initial time.Duration
	Factor  float64
	Jitter  float64
	Steps   int
}

// WebhookBackoff is upstream's schedule for webhook calls: five attempts
// over about four seconds rides out a webhook restart without making the
// client wait long for a webhook that is down.
var WebhookBackoff = Backoff{Initial: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// ErrWebhook is wrapped by errors of a webhook call that did not yield a
// review.
var ErrWebhook = errors.New("webhook call failed")

// WebhookTokenConfig configures NewWebhookTokenAuthenticator.
type WebhookTokenConfig struct {
	// Client says where the webhook is and how to trust and authenticate
	// to it; Client.Server is the full URL reviews are POSTed to.
	Client config.KubeconfigClient
	// Version is the TokenReview version sent: "v1" or "v1beta1".
	Version string
	// CacheTTL is how long acceptances and rejections are remembered.
	CacheTTL time.Duration
	// Brand spells the authentication group.
	Brand config.Brand
	// ImplicitAudiences are the audiences a review that names none is
	// taken to grant: the API audiences.
	ImplicitAudiences []string
}

// NewWebhookTokenAuthenticator asks a remote webhook about bearer tokens
// with a TokenReview, caching its answers per CacheTTL. Transient failures
// are retried per WebhookBackoff; a failure that persists is an error (and
// not cached).
func NewWebhookTokenAuthenticator(cfg WebhookTokenConfig) (TokenAuthenticator, error) {
	w, err := newWebhookToken(cfg)
	if err != nil {
		return nil, err
	}
	return NewCachedTokenAuthenticator(w, cfg.CacheTTL, cfg.CacheTTL), nil
}

type webhookToken struct {
	*webhookClient
	apiVersion   string
	implicitAuds []string
}

func newWebhookToken(cfg WebhookTokenConfig) (*webhookToken, error) {
	if cfg.Version != "v1" && cfg.Version != "v1beta1" {
		return nil, fmt.Errorf("unsupported authentication webhook version %q, supported versions are %q, %q", cfg.Version, "v1", "v1beta1")
	}
	c, err := newWebhookClient(cfg.Client, webhookTimeout)
	if err != nil {
		return nil, err
	}
	return &webhookToken{
		webhookClient: c,
		apiVersion:    cfg.Brand.Group("authentication") + "/" + cfg.Version,
		implicitAuds:  cfg.ImplicitAudiences,
	}, nil
}

// tokenReview is the wire form of a TokenReview, v1 and v1beta1 alike.
type tokenReview struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		CreationTimestamp *string `json:"creationTimestamp"`
	} `json:"metadata"`
	Spec struct {
		Token     string   `json:"token"`
		Audiences []string `json:"audiences,omitempty"`
	} `json:"spec"`
	Status tokenReviewStatus `json:"status"`
}

type tokenReviewStatus struct {
	Authenticated bool `json:"authenticated,omitempty"`
	User          struct {
		Username string              `json:"username,omitempty"`
		UID      string              `json:"uid,omitempty"`
		Groups   []string            `json:"groups,omitempty"`
		Extra    map[string][]string `json:"extra,omitempty"`
	} `json:"user"`
	Audiences []string `json:"audiences,omitempty"`
	Error     string   `json:"error,omitempty"`
}

func (w *webhookToken) AuthenticateToken(ctx context.Context, token string) (*User, bool, error) {
	wantAuds, checkAuds := AudiencesFrom(ctx)
	var req tokenReview
	req.APIVersion, req.Kind = w.apiVersion, "TokenReview"
	req.Spec.Token, req.Spec.Audiences = token, wantAuds
	body, err := json.Marshal(&req)
	if err != nil {
		return nil, false, err
	}
	data, err := w.post(ctx, body)
	if err == nil {
		var status tokenReviewStatus
		if status, err = decodeTokenReview(data, w.apiVersion); err == nil {
			return w.user(status, wantAuds, checkAuds)
		}
	}
	slog.Error("failed to make webhook authenticator request", "err", err)
	return nil, false, err
}

// user maps a review's status to the result: the audience check comes
// first, then the verdict. An accepted user is valid for the audiences
// both asked and granted.
func (w *webhookToken) user(st tokenReviewStatus, wantAuds []string, checkAuds bool) (*User, bool, error) {
	var auds []string
	if checkAuds {
		got := w.implicitAuds
		if len(st.Audiences) > 0 {
			got = st.Audiences
		}
		if auds = IntersectAudiences(wantAuds, got); len(auds) == 0 {
			return nil, false, nil
		}
	}
	if !st.Authenticated {
		if st.Error != "" {
			return nil, false, errors.New(st.Error)
		}
		return nil, false, nil
	}
	return &User{Name: st.User.Username, UID: st.User.UID, Groups: st.User.Groups, Extra: st.User.Extra, Audiences: auds}, true, nil
}

// decodeTokenReview reads a webhook's answer: a TokenReview of the group
// asked, in either version.
func decodeTokenReview(data []byte, apiVersion string) (tokenReviewStatus, error) {
	var resp tokenReview
	if err := json.Unmarshal(data, &resp); err != nil {
		return tokenReviewStatus{}, fmt.Errorf("%w: decoding the response: %w", ErrWebhook, err)
	}
	group, _, _ := strings.Cut(apiVersion, "/")
	g, v, _ := strings.Cut(resp.APIVersion, "/")
	if resp.Kind != "TokenReview" || g != group || (v != "v1" && v != "v1beta1") {
		return tokenReviewStatus{}, fmt.Errorf("%w: the response is %s %q, not a TokenReview of %s", ErrWebhook, resp.APIVersion, resp.Kind, group)
	}
	return resp.Status, nil
}
