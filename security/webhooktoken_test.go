package security

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platd/config"
)

// reviewServer is a token webhook over TLS with its own CA that requires
// the client certificate of clientCN, signed by a second CA.
type reviewServer struct {
	srv    *httptest.Server
	calls  atomic.Int32
	mu     sync.Mutex
	bodies []string
	// answer maps a token to the response; it gets the decoded request.
	answer func(w http.ResponseWriter, token string)
	client config.KubeconfigClient
}

const reviewClientCN = "platd-webhook-client"

func newReviewServer(t *testing.T, answer func(w http.ResponseWriter, token string)) *reviewServer {
	t.Helper()
	dir := t.TempDir()
	serverCA, err := EnsureCA(filepath.Join(dir, "server-ca"))
	if err != nil {
		t.Fatal(err)
	}
	clientCA, err := EnsureCA(filepath.Join(dir, "client-ca"))
	if err != nil {
		t.Fatal(err)
	}
	sc, sk := filepath.Join(dir, "srv.crt"), filepath.Join(dir, "srv.key")
	if err := serverCA.EnsureServingCert(sc, sk, []string{"127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	cc, ck := filepath.Join(dir, "cli.crt"), filepath.Join(dir, "cli.key")
	if err := clientCA.EnsureClientCert(cc, ck, reviewClientCN, nil); err != nil {
		t.Fatal(err)
	}
	rs := &reviewServer{answer: answer}
	rs.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != reviewClientCN {
			http.Error(w, "wrong client", http.StatusForbidden)
			return
		}
		rs.calls.Add(1)
		b, _ := io.ReadAll(r.Body)
		rs.mu.Lock()
		rs.bodies = append(rs.bodies, string(b))
		rs.mu.Unlock()
		var rv tokenReview
		_ = json.Unmarshal(b, &rv)
		w.Header().Set("Content-Type", "application/json")
		rs.answer(w, rv.Spec.Token)
	}))
	pair, err := tls.LoadX509KeyPair(sc, sk)
	if err != nil {
		t.Fatal(err)
	}
	rs.srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCA.CertPool()}
	rs.srv.StartTLS()
	t.Cleanup(rs.srv.Close)
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	rs.client = config.KubeconfigClient{Server: rs.srv.URL + "/authenticate", CAPEM: serverCA.CertPEM(), ClientCertPEM: read(cc), ClientKeyPEM: read(ck)}
	return rs
}

func (rs *reviewServer) lastBody() string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.bodies) == 0 {
		return ""
	}
	return rs.bodies[len(rs.bodies)-1]
}

// reviewAnswer writes a TokenReview response with status st.
func reviewAnswer(w http.ResponseWriter, apiVersion, status string) {
	_, _ = io.WriteString(w, `{"apiVersion":"`+apiVersion+`","kind":"TokenReview","status":`+status+`}`)
}

var testBrand = config.Brands["plat"]

// authGroup is the authentication group of testBrand; upstreamAuthGroup
// that of the other brand.
var (
	authGroup         = testBrand.Group("authentication")
	upstreamAuthGroup = config.Brands["kubernetes"].Group("authentication")
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newTestWebhook returns the cached webhook authenticator on clock with
// retries that do not wait, and counts the waits.
func newTestWebhook(t *testing.T, rs *reviewServer, version string, ttl time.Duration, clock *fakeClock, implicit ...string) (TokenAuthenticator, *[]time.Duration) {
	t.Helper()
	w, err := newWebhookToken(WebhookTokenConfig{Client: rs.client, Version: version, CacheTTL: ttl, Brand: testBrand, ImplicitAudiences: implicit})
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	w.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	return newTokenCache(w, ttl, ttl, clock.Now), &waits
}

func TestWebhookTokenReview(t *testing.T) {
	t.Parallel()
	v1 := authGroup + "/v1"
	rs := newReviewServer(t, func(w http.ResponseWriter, token string) {
		switch token {
		case "good":
			reviewAnswer(w, v1, `{"authenticated":true,"user":{"username":"jane","uid":"42","groups":["dev","ops"],"extra":{"scopes":["a","b"]}}}`)
		case "good-beta":
			reviewAnswer(w, authGroup+"/v1beta1", `{"authenticated":true,"user":{"username":"beta"}}`)
		case "denied":
			reviewAnswer(w, v1, `{"authenticated":false}`)
		case "denied-msg":
			reviewAnswer(w, v1, `{"authenticated":false,"error":"token expired"}`)
		case "server-error":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "bad-request":
			http.Error(w, "no", http.StatusBadRequest)
		case "unavailable-retry-after":
			w.Header().Set("Retry-After", "1")
			http.Error(w, "later", http.StatusServiceUnavailable)
		case "hangup":
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
		case "malformed":
			_, _ = io.WriteString(w, `{"apiVersion":`)
		case "wrong-kind":
			_, _ = io.WriteString(w, `{"apiVersion":"v1","kind":"Status","status":{}}`)
		case "wrong-group":
			reviewAnswer(w, upstreamAuthGroup+"/v1", `{"authenticated":true,"user":{"username":"x"}}`)
		}
	})
	clock := &fakeClock{now: time.Unix(1000, 0)}
	a, waits := newTestWebhook(t, rs, "v1", 0, clock)
	cases := []struct {
		token    string
		user     *User
		err      string
		attempts int32
		waits    int
	}{
		{token: "good", user: &User{Name: "jane", UID: "42", Groups: []string{"dev", "ops"}, Extra: map[string][]string{"scopes": {"a", "b"}}}, attempts: 1},
		{token: "good-beta", user: &User{Name: "beta"}, attempts: 1},
		{token: "denied", attempts: 1},
		{token: "denied-msg", err: "token expired", attempts: 1},
		{token: "server-error", err: "the server responded with status 500: boom", attempts: 5, waits: 4},
		{token: "unavailable-retry-after", err: "status 503", attempts: 5, waits: 4},
		{token: "bad-request", err: "the server responded with status 400", attempts: 1},
		{token: "hangup", err: "EOF", attempts: 5, waits: 4},
		{token: "malformed", err: "decoding the response", attempts: 1},
		{token: "wrong-kind", err: `not a TokenReview of ` + authGroup, attempts: 1},
		{token: "wrong-group", err: `not a TokenReview of ` + authGroup, attempts: 1},
	}
	for _, c := range cases {
		before := rs.calls.Load()
		*waits = nil
		u, ok, err := a.AuthenticateToken(context.Background(), c.token)
		if got := rs.calls.Load() - before; got != c.attempts {
			t.Errorf("%s: %d webhook calls, want %d", c.token, got, c.attempts)
		}
		if len(*waits) != c.waits {
			t.Errorf("%s: %d waits, want %d", c.token, len(*waits), c.waits)
		}
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || ok {
				t.Errorf("%s: ok=%v err=%v, want error containing %q", c.token, ok, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.token, err)
			continue
		}
		if ok != (c.user != nil) || !reflect.DeepEqual(u, c.user) {
			t.Errorf("%s: ok=%v user=%+v, want %+v", c.token, ok, u, c.user)
		}
	}
	// The backoff grows by 1.5 from 500ms with at most 20% jitter.
	*waits = nil
	_, _, _ = a.AuthenticateToken(context.Background(), "server-error")
	base := 500 * time.Millisecond
	for i, d := range *waits {
		if d < base || d > base+base/5 {
			t.Errorf("wait %d is %s, want %s..%s", i, d, base, base+base/5)
		}
		base = time.Duration(float64(base) * 1.5)
	}
	// The request is the upstream TokenReview, in the version asked for.
	_, _, _ = a.AuthenticateToken(context.Background(), "good")
	want := `{"apiVersion":"` + authGroup + `/v1","kind":"TokenReview","metadata":{"creationTimestamp":null},"spec":{"token":"good"},"status":{"user":{}}}`
	if got := rs.lastBody(); got != want {
		t.Errorf("request body\n got %s\nwant %s", got, want)
	}
	beta, _ := newTestWebhook(t, rs, "v1beta1", 0, clock)
	_, _, _ = beta.AuthenticateToken(WithAudiences(context.Background(), []string{"api", "other"}), "good")
	want = `{"apiVersion":"` + authGroup + `/v1beta1","kind":"TokenReview","metadata":{"creationTimestamp":null},"spec":{"token":"good","audiences":["api","other"]},"status":{"user":{}}}`
	if got := rs.lastBody(); got != want {
		t.Errorf("request body\n got %s\nwant %s", got, want)
	}
}

func TestWebhookTokenVersion(t *testing.T) {
	t.Parallel()
	_, err := newWebhookToken(WebhookTokenConfig{Version: "v2", Client: config.KubeconfigClient{Server: "https://127.0.0.1:1"}})
	if err == nil || err.Error() != `unsupported authentication webhook version "v2", supported versions are "v1", "v1beta1"` {
		t.Errorf("err = %v", err)
	}
}

func TestWebhookTokenCache(t *testing.T) {
	t.Parallel()
	allow := atomic.Bool{}
	allow.Store(true)
	rs := newReviewServer(t, func(w http.ResponseWriter, token string) {
		switch {
		case token == "flaky" && !allow.Load():
			http.Error(w, "down", http.StatusBadRequest)
		case token == "denied":
			reviewAnswer(w, authGroup+"/v1", `{"authenticated":false}`)
		case token == "denied-msg":
			reviewAnswer(w, authGroup+"/v1", `{"authenticated":false,"error":"nope"}`)
		default:
			reviewAnswer(w, authGroup+"/v1", `{"authenticated":true,"user":{"username":"u-`+token+`","groups":["g"]}}`)
		}
	})
	clock := &fakeClock{now: time.Unix(1000, 0)}
	a, _ := newTestWebhook(t, rs, "v1", 2*time.Minute, clock)
	ctx := context.Background()
	calls := func() int32 { return rs.calls.Load() }

	u, ok, err := a.AuthenticateToken(ctx, "t1")
	if !ok || err != nil || u.Name != "u-t1" || calls() != 1 {
		t.Fatalf("first: %v %v %v calls=%d", u, ok, err, calls())
	}
	// The cached user is the caller's to change.
	u.Groups[0] = "changed"
	u, _, _ = a.AuthenticateToken(ctx, "t1")
	if calls() != 1 {
		t.Errorf("cache hit called the webhook: %d calls", calls())
	}
	if u.Groups[0] != "g" {
		t.Errorf("cached user was modified through a returned value: %v", u.Groups)
	}
	// Another audience set is another entry.
	_, _, _ = a.AuthenticateToken(WithAudiences(ctx, []string{"x"}), "t1")
	if calls() != 2 {
		t.Errorf("audiences not in the cache key: %d calls", calls())
	}
	_, _, _ = a.AuthenticateToken(WithAudiences(ctx, []string{"x"}), "t1")
	if calls() != 2 {
		t.Errorf("audience entry not cached: %d calls", calls())
	}
	// Rejections without error are cached too.
	for range 2 {
		if _, ok, err := a.AuthenticateToken(ctx, "denied"); ok || err != nil {
			t.Errorf("denied: ok=%v err=%v", ok, err)
		}
	}
	if calls() != 3 {
		t.Errorf("rejection not cached: %d calls", calls())
	}
	// Rejections with an error message and failures are not cached.
	for range 2 {
		_, _, _ = a.AuthenticateToken(ctx, "denied-msg")
	}
	if calls() != 5 {
		t.Errorf("rejection with error cached: %d calls", calls())
	}
	allow.Store(false)
	if _, _, err := a.AuthenticateToken(ctx, "flaky"); err == nil {
		t.Errorf("flaky: no error")
	}
	allow.Store(true)
	if _, ok, _ := a.AuthenticateToken(ctx, "flaky"); !ok || calls() != 7 {
		t.Errorf("an error was cached: ok=%v calls=%d", ok, calls())
	}
	// Entries live for the TTL and no longer.
	clock.Step(2*time.Minute - time.Second)
	_, _, _ = a.AuthenticateToken(ctx, "t1")
	_, _, _ = a.AuthenticateToken(ctx, "denied")
	if calls() != 7 {
		t.Errorf("entries expired early: %d calls", calls())
	}
	clock.Step(time.Second)
	_, _, _ = a.AuthenticateToken(ctx, "t1")
	_, _, _ = a.AuthenticateToken(ctx, "denied")
	if calls() != 9 {
		t.Errorf("entries outlived the TTL: %d calls", calls())
	}
}

func TestWebhookTokenAudiences(t *testing.T) {
	t.Parallel()
	rs := newReviewServer(t, func(w http.ResponseWriter, token string) {
		auds := map[string]string{"none": ``, "api": `,"audiences":["api"]`, "other": `,"audiences":["other"]`}[token]
		reviewAnswer(w, authGroup+"/v1", `{"authenticated":true,"user":{"username":"u"}`+auds+`}`)
	})
	clock := &fakeClock{now: time.Unix(1000, 0)}
	a, _ := newTestWebhook(t, rs, "v1", 0, clock, "api")
	noImplicit, _ := newTestWebhook(t, rs, "v1", 0, clock)
	for _, c := range []struct {
		name  string
		auth  TokenAuthenticator
		want  []string
		token string
		ok    bool
		valid []string
	}{
		{"no audiences asked", a, nil, "other", true, nil},
		{"granted audience matches", a, []string{"b", "api"}, "api", true, []string{"api"}},
		{"granted audience differs", a, []string{"api"}, "other", false, nil},
		{"none granted, implicit matches", a, []string{"api"}, "none", true, []string{"api"}},
		{"none granted, implicit differs", a, []string{"b"}, "none", false, nil},
		{"none granted, no implicit", noImplicit, []string{"api"}, "none", false, nil},
	} {
		ctx := context.Background()
		if c.want != nil {
			ctx = WithAudiences(ctx, c.want)
		}
		u, ok, err := c.auth.AuthenticateToken(ctx, c.token)
		if ok != c.ok || err != nil {
			t.Errorf("%s: ok=%v err=%v, want ok=%v", c.name, ok, err, c.ok)
		}
		if ok && !reflect.DeepEqual(u.Audiences, c.valid) {
			t.Errorf("%s: valid for %q, want %q", c.name, u.Audiences, c.valid)
		}
	}
}

func TestWebhookTokenClientCertificate(t *testing.T) {
	t.Parallel()
	rs := newReviewServer(t, func(w http.ResponseWriter, _ string) {
		reviewAnswer(w, authGroup+"/v1", `{"authenticated":true,"user":{"username":"u"}}`)
	})
	kc := rs.client
	kc.ClientCertPEM, kc.ClientKeyPEM = nil, nil
	w, err := newWebhookToken(WebhookTokenConfig{Client: kc, Version: "v1", Brand: testBrand})
	if err != nil {
		t.Fatal(err)
	}
	w.sleep = func(context.Context, time.Duration) error { return nil }
	if _, ok, err := w.AuthenticateToken(context.Background(), "x"); ok || err == nil {
		t.Errorf("without a client certificate: ok=%v err=%v", ok, err)
	}
	if rs.calls.Load() != 0 {
		t.Errorf("handler reached without a client certificate")
	}
}

func FuzzDecodeTokenReview(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"` + authGroup + `/v1","kind":"TokenReview","status":{"authenticated":true,"user":{"username":"a","extra":{"k":["v"]}}}}`))
	f.Add([]byte(`{"apiVersion":"` + authGroup + `/v1beta1","kind":"TokenReview","status":{"authenticated":"yes"}}`))
	f.Add([]byte(`{"apiVersion":"` + authGroup + `/v1","kind":"TokenReview","status":{"user":{"groups":"g"}}}`))
	f.Add([]byte(`[`))
	f.Add([]byte(`null`))
	w := &webhookToken{apiVersion: authGroup + "/v1", implicitAuds: []string{"api"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeTokenReview(data, w.apiVersion)
		if err != nil {
			return
		}
		u, ok, err := w.user(st, []string{"api"}, true)
		if ok && (u == nil || err != nil) {
			t.Fatalf("ok with user %v err %v", u, err)
		}
		var probe any
		if json.Unmarshal(data, &probe) != nil {
			t.Fatalf("malformed JSON decoded: %q", data)
		}
	})
}
