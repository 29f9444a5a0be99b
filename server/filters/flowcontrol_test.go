package filters

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"platd/security"
	"platd/security/flowcontrol"
)

// testClassifier puts "alice" in an exempt level and everyone else in a
// limited one; "bob" matches no schema.
func testClassifier(t *testing.T) *flowcontrol.Classifier {
	t.Helper()
	schema := func(js string) *flowcontrol.FlowSchema {
		fs, err := flowcontrol.DecodeFlowSchema([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	level := func(js string) *flowcontrol.PriorityLevel {
		pl, err := flowcontrol.DecodePriorityLevel([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	everything := `"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"],"clusterScope":true,"namespaces":["*"]}],
		"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}]`
	var c flowcontrol.Classifier
	c.Replace([]*flowcontrol.FlowSchema{
		schema(`{"metadata":{"name":"alice","uid":"fs-alice"},"spec":{"priorityLevelConfiguration":{"name":"exempt"},"matchingPrecedence":1,
			"rules":[{"subjects":[{"kind":"User","user":{"name":"alice"}}],` + everything + `}]}}`),
		schema(`{"metadata":{"name":"rest","uid":"fs-rest"},"spec":{"priorityLevelConfiguration":{"name":"limited"},"matchingPrecedence":2,
			"rules":[{"subjects":[{"kind":"Group","group":{"name":"everyone"}}],` + everything + `}]}}`),
	}, []*flowcontrol.PriorityLevel{
		level(`{"metadata":{"name":"exempt","uid":"pl-exempt"},"spec":{"type":"Exempt"}}`),
		level(`{"metadata":{"name":"limited","uid":"pl-limited"},"spec":{"type":"Limited"}}`),
	})
	return &c
}

// TestFlowControlHeaders: a classified request names its flow schema and
// priority level; long-running requests other than watches, and requests
// no schema matches, carry neither header.
func TestFlowControlHeaders(t *testing.T) {
	t.Parallel()
	classified := FlowControl(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}), testClassifier(t))
	h := RequestInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := &security.User{Name: r.Header.Get("User"), Groups: []string{"everyone"}}
		if u.Name == "bob" {
			u.Groups = nil
		}
		classified.ServeHTTP(w, r.WithContext(WithUser(r.Context(), u)))
	}))
	for _, tc := range []struct {
		name, user, target string
		fs, pl             string
	}{
		{"exempt user", "alice", "/api/v1/namespaces/a/configmaps", "fs-alice", "pl-exempt"},
		{"anyone else", "carol", "/api/v1/namespaces/a/configmaps", "fs-rest", "pl-limited"},
		{"non-resource", "carol", "/version", "fs-rest", "pl-limited"},
		{"watch", "carol", "/api/v1/configmaps?watch=true", "fs-rest", "pl-limited"},
		{"log stream is not classified", "carol", "/api/v1/namespaces/a/pods/p/log", "", ""},
		{"no schema matches", "bob", "/api/v1/configmaps", "", ""},
	} {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, tc.target, nil)
		r.Header.Set("User", tc.user)
		h.ServeHTTP(rec, r)
		if rec.Code != http.StatusTeapot {
			t.Errorf("%s: code %d", tc.name, rec.Code)
		}
		// Upstream's names, canonical as its responses carry them.
		fs, fsSet := rec.Header()["X-Kubernetes-Pf-Flowschema-Uid"]
		pl, plSet := rec.Header()["X-Kubernetes-Pf-Prioritylevel-Uid"]
		if tc.fs == "" {
			if fsSet || plSet {
				t.Errorf("%s: headers %v %v, want none", tc.name, fs, pl)
			}
			continue
		}
		if len(fs) != 1 || fs[0] != tc.fs || len(pl) != 1 || pl[0] != tc.pl {
			t.Errorf("%s: flow schema %v, priority level %v; want %s, %s", tc.name, fs, pl, tc.fs, tc.pl)
		}
	}
}

// TestLimitInFlightByPriorityLevel: once requests are classified, the
// exempt priority level decides who passes full slots, not the
// privileged group.
func TestLimitInFlightByPriorityLevel(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	limited := LimitInFlight(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Block") != "" {
			entered <- struct{}{}
			<-release
		}
		w.WriteHeader(http.StatusTeapot)
	}), 1, 1)
	classified := FlowControl(limited, testClassifier(t))
	h := RequestInfo(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := &security.User{Name: r.Header.Get("User"), Groups: []string{"everyone"}}
		if u.Name == "admin" {
			u.Groups = append(u.Groups, security.SystemPrivilegedGroup)
		}
		classified.ServeHTTP(w, r.WithContext(WithUser(r.Context(), u)))
	}))
	serve := func(user string, block bool) int {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil)
		r.Header.Set("User", user)
		if block {
			r.Header.Set("Block", "1")
		}
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); serve("carol", true) }()
	<-entered
	for user, want := range map[string]int{
		"alice": http.StatusTeapot,          // exempt level
		"admin": http.StatusTooManyRequests, // privileged, but classified as limited
		"carol": http.StatusTooManyRequests,
	} {
		if got := serve(user, false); got != want {
			t.Errorf("%s: code %d, want %d", user, got, want)
		}
	}
	close(release)
	wg.Wait()
}
