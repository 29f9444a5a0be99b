package server_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"platd/config"
)

// Values at the edge of the uint64 a resourceVersion is parsed as: past
// every int64 revision of the store (2^63, 2^64-1), and past uint64
// (2^64).
const (
	rvPastInt64  = "9223372036854775808"
	rvMaxUint64  = "18446744073709551615"
	rvPastUint64 = "18446744073709551616"
)

var hugeResourceVersions = []string{rvPastInt64, rvMaxUint64, rvPastUint64}

// rvOutcome is the Status a request must get.
type rvOutcome struct {
	code    int
	reason  string
	message string
	// retry is details.retryAfterSeconds and the Retry-After header; 0:
	// neither.
	retry int
	// tooLarge marks the ResourceVersionTooLarge cause.
	tooLarge bool
}

// The reads upstream answers from its watch cache: a version past the
// store waits and then times out with a retry hint; one that is no uint64
// is the parse error, unwrapped.
func cachedRead(v string, current int64) rvOutcome {
	if v == rvPastUint64 {
		return rvOutcome{code: 500, message: fmt.Sprintf(`resourceVersion: Invalid value: %q: strconv.ParseUint: parsing %q: value out of range`, v, v)}
	}
	return rvOutcome{code: 504, reason: "Timeout", retry: 1, tooLarge: true,
		message: fmt.Sprintf("Timeout: Too large resource version: %s, current: %d", v, current)}
}

// The reads upstream serves from storage (exact and legacy paged lists):
// too large at once, without a hint; no uint64 is a 400.
func storageRead(v string, current int64) rvOutcome {
	if v == rvPastUint64 {
		return rvOutcome{code: 400, reason: "BadRequest", message: fmt.Sprintf(`invalid resource version: resourceVersion: Invalid value: %q: strconv.ParseUint: parsing %q: value out of range`, v, v)}
	}
	return rvOutcome{code: 504, reason: "Timeout", tooLarge: true,
		message: fmt.Sprintf("Timeout: Too large resource version: %s, current: %d", v, current)}
}

// A write naming a version: stale unless it is the stored one; no uint64
// fails upstream's storage parse, unwrapped.
func writeWith(v, gr, name string) rvOutcome {
	if v == rvPastUint64 {
		return rvOutcome{code: 500, message: fmt.Sprintf(`strconv.ParseUint: parsing %q: value out of range`, v)}
	}
	return rvOutcome{code: 409, reason: "Conflict",
		message: fmt.Sprintf(`Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again`, gr, name)}
}

// check compares a response with the outcome: code, reason, message,
// retry hint (body and header) and cause.
func (o rvOutcome) check(t *testing.T, r *resp) {
	t.Helper()
	if r.code != o.code {
		t.Fatalf("status %d, want %d; body %s", r.code, o.code, r.body)
	}
	var st struct {
		Kind, Status, Reason, Message string
		Code                          int
		Details                       *struct {
			RetryAfterSeconds int
			Causes            []map[string]string
		}
	}
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	if st.Kind != "Status" || st.Status != "Failure" || st.Code != o.code || st.Reason != o.reason || st.Message != o.message {
		t.Errorf("Status %s\n want code %d reason %q message %q", r.body, o.code, o.reason, o.message)
	}
	retry := 0
	var causes []map[string]string
	if st.Details != nil {
		retry, causes = st.Details.RetryAfterSeconds, st.Details.Causes
	}
	wantHeader := ""
	if o.retry > 0 {
		wantHeader = strconv.Itoa(o.retry)
	}
	if retry != o.retry || r.header.Get("Retry-After") != wantHeader {
		t.Errorf("retry %d, Retry-After %q; want %d", retry, r.header.Get("Retry-After"), o.retry)
	}
	var wantCauses []map[string]string
	if o.tooLarge {
		wantCauses = []map[string]string{{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}}
	}
	if !reflect.DeepEqual(causes, wantCauses) {
		t.Errorf("causes %v, want %v", causes, wantCauses)
	}
}

// doAsync is a GET as admin that may run on another goroutine: it
// reports failures as a 599 response instead of stopping the test.
func (e *env) doAsync(p string, header ...string) *resp {
	r, err := http.NewRequest("GET", e.srv.URL()+p, nil)
	if err != nil {
		return &resp{code: 599, body: []byte(err.Error())}
	}
	r.Header.Set("Authorization", "Bearer "+adminToken)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	res, err := e.client.Do(r)
	if err != nil {
		return &resp{code: 599, body: []byte(err.Error())}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return &resp{code: 599, body: []byte(err.Error())}
	}
	return &resp{code: res.StatusCode, header: res.Header, body: b}
}

// storeRevision is the store's current revision, as a list reports it,
// once the server's own writes after its start (each flow schema's
// Dangling condition, the legacy token tracking ConfigMap) are done.
func storeRevision(t *testing.T, e *env) int64 {
	t.Helper()
	b := e.opts.Brand
	eventually(t, "the legacy token tracking ConfigMap", func() bool {
		return e.do("GET", "/api/v1/namespaces/"+b.SystemNamespace+"/configmaps/"+b.LegacyTokenTrackingConfigMap, nil).code == 200
	})
	schemas := groupPath(e.opts.Brand.Group("flowcontrol.apiserver"), "v1", "", "flowschemas")
	eventually(t, "every flow schema's Dangling condition", func() bool {
		for _, fs := range e.do("GET", schemas, nil).mustCode(t, 200).obj(t)["items"].([]any) {
			if at(fs.(map[string]any), "status", "conditions") == nil {
				return false
			}
		}
		return true
	})
	n, err := strconv.ParseInt(rvOf(e.do("GET", "/api/v1/namespaces/default/configmaps", nil).mustCode(t, 200).obj(t)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitNamespacesFurnished waits until every namespace holds the default
// ServiceAccount the service account controller gives it (the test
// server publishes no root CA ConfigMap).
func waitNamespacesFurnished(t *testing.T, e *env) {
	t.Helper()
	eventually(t, "every namespace furnished", func() bool {
		items, _ := e.do("GET", "/api/v1/namespaces", nil).mustCode(t, 200).obj(t)["items"].([]any)
		for _, it := range items {
			ns, _ := path(it.(map[string]any), "metadata.name").(string)
			if e.do("GET", "/api/v1/namespaces/"+ns+"/serviceaccounts/default", nil).code != 200 {
				return false
			}
		}
		return len(items) > 0
	})
}

// TestHugeResourceVersionReads asks every read for versions at and past
// the end of uint64: none may wrap to a negative revision (which served
// the current state, or a 500 naming the engine's invalid argument).
func TestHugeResourceVersionReads(t *testing.T) {
	t.Parallel()
	e, _ := startGadgets(t, "rv.example.com")
	waitNamespacesFurnished(t, e)
	cms := "/api/v1/namespaces/default/configmaps"
	gadgets := groupPath("rv.example.com", "v1", "default", "gadgets")
	e.do("POST", cms, cm("rv-cm", nil, nil)).mustCode(t, 201)
	e.do("POST", gadgets, map[string]any{"apiVersion": "rv.example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g1"}, "spec": map[string]any{"name": "a", "replicas": 1}}).mustCode(t, 201)
	meta := platBrand.MetaGroup()
	table := "application/json;as=Table;v=v1;g=" + meta
	partial := "application/json;as=PartialObjectMetadata;v=v1;g=" + meta
	partialList := "application/json;as=PartialObjectMetadataList;v=v1;g=" + meta

	type read struct {
		name, path, accept string
		want               func(v string, current int64) rvOutcome
	}
	reads := []read{
		{"get", cms + "/rv-cm?resourceVersion=%s", "", cachedRead},
		{"get metadata", cms + "/rv-cm?resourceVersion=%s", partial, cachedRead},
		{"get table", cms + "/rv-cm?resourceVersion=%s", table, cachedRead},
		{"get missing", cms + "/nothing?resourceVersion=%s", "", cachedRead},
		{"get status", "/api/v1/namespaces/default/status?resourceVersion=%s", "", cachedRead},
		{"get custom", gadgets + "/g1?resourceVersion=%s", "", cachedRead},
		{"get custom status", gadgets + "/g1/status?resourceVersion=%s", "", cachedRead},
		{"get custom scale", gadgets + "/g1/scale?resourceVersion=%s", "", cachedRead},
		{"list", cms + "?resourceVersion=%s", "", cachedRead},
		{"list all namespaces", "/api/v1/configmaps?resourceVersion=%s", "", cachedRead},
		{"list not older", cms + "?resourceVersion=%s&resourceVersionMatch=NotOlderThan", "", cachedRead},
		{"list not older paged", cms + "?resourceVersion=%s&resourceVersionMatch=NotOlderThan&limit=1", "", storageRead},
		{"list table", cms + "?resourceVersion=%s", table, cachedRead},
		{"list metadata", cms + "?resourceVersion=%s", partialList, cachedRead},
		{"list custom", gadgets + "?resourceVersion=%s", "", cachedRead},
		{"list paged", cms + "?resourceVersion=%s&limit=1", "", storageRead},
		{"list exact", cms + "?resourceVersion=%s&resourceVersionMatch=Exact", "", storageRead},
		{"list exact paged", cms + "?resourceVersion=%s&resourceVersionMatch=Exact&limit=1", "", storageRead},
		{"list table paged", cms + "?resourceVersion=%s&limit=1", table, storageRead},
		{"list custom paged", gadgets + "?resourceVersion=%s&limit=1", "", storageRead},
		{"list custom exact", gadgets + "?resourceVersion=%s&resourceVersionMatch=Exact", partialList, storageRead},
	}
	// The continue token decides the revision of a resumed list: any
	// other resourceVersion than "" and "0" is refused first.
	e.do("POST", cms, cm("rv-cm2", nil, nil)).mustCode(t, 201)
	page := e.do("GET", cms+"?limit=1", nil).mustCode(t, 200).obj(t)
	cont, _ := path(page, "metadata.continue").(string)
	if cont == "" {
		t.Fatalf("a page of one of two objects has no continue: %v", page)
	}
	current := storeRevision(t, e)
	continued := func(string, int64) rvOutcome {
		return rvOutcome{code: 400, reason: "BadRequest", message: "specifying resource version is not allowed when using continue"}
	}
	reads = append(reads, read{"list continue", cms + "?resourceVersion=%s&limit=1&continue=" + url.QueryEscape(cont), "", continued})

	// The cached reads each wait out the too-large wait: send them all
	// at once (subtests would run only GOMAXPROCS at a time), then check.
	type result struct {
		name string
		want rvOutcome
		r    *resp
	}
	results := make(chan result)
	n := 0
	for _, rd := range reads {
		for _, v := range hugeResourceVersions {
			n++
			go func() {
				var h []string
				if rd.accept != "" {
					h = []string{"Accept", rd.accept}
				}
				results <- result{rd.name + " " + v, rd.want(v, current), e.doAsync(fmt.Sprintf(rd.path, v), h...)}
			}()
		}
	}
	for range n {
		res := <-results
		t.Run(res.name, func(t *testing.T) { res.want.check(t, res.r) })
	}
	if now := storeRevision(t, e); now != current {
		t.Errorf("the reads moved the store from %d to %d", current, now)
	}
}

// TestPagedNotOlderThanReadsStorage: upstream sends every paged list
// with a resourceVersion other than "" and "0" to storage, NotOlderThan
// included, so a bad version is its 400 and a version past the store its
// 504 at once without a retry hint (not the watch cache's parse error and
// wait).
func TestPagedNotOlderThanReadsStorage(t *testing.T) {
	t.Parallel()
	e := start(t)
	cms := "/api/v1/namespaces/default/configmaps"
	for _, n := range []string{"pn-1", "pn-2", "pn-3"} {
		e.do("POST", cms, cm(n, nil, nil)).mustCode(t, 201)
	}
	current := storeRevision(t, e)
	q := "?limit=2&resourceVersionMatch=NotOlderThan&resourceVersion="

	page := e.do("GET", cms+q+strconv.FormatInt(current, 10), nil).mustCode(t, 200).obj(t)
	items, _ := page["items"].([]any)
	if len(items) != 2 || path(page, "metadata.continue") == nil {
		t.Errorf("a page of 2 of 3 objects: %v", page)
	}
	if got, _ := strconv.ParseInt(rvOf(page), 10, 64); got < current {
		t.Errorf("page at %d, older than %d", got, current)
	}

	storageRead := func(v string) rvOutcome {
		return rvOutcome{code: 400, reason: "BadRequest",
			message: fmt.Sprintf(`invalid resource version: resourceVersion: Invalid value: %q: strconv.ParseUint: parsing %q: invalid syntax`, v, v)}
	}
	storageRead("abc").check(t, e.do("GET", cms+q+"abc", nil))

	future := strconv.FormatInt(current+1_000_000, 10)
	r := e.do("GET", cms+q+future, nil)
	var st struct{ Message string }
	_ = json.Unmarshal(r.body, &st)
	prefix := "Timeout: Too large resource version: " + future + ", current: "
	now, err := strconv.ParseInt(strings.TrimPrefix(st.Message, prefix), 10, 64)
	if !strings.HasPrefix(st.Message, prefix) || err != nil || now < current {
		t.Fatalf("message %q", st.Message)
	}
	want := rvOutcome{code: 504, reason: "Timeout", tooLarge: true, message: st.Message}
	want.check(t, r)

	// Pinned at a revision not reached (a legacy paged list): the answer
	// upstream gives after v1.32 instead of etcd's text, with a hint.
	r = e.do("GET", cms+"?limit=2&resourceVersion="+future, nil)
	_ = json.Unmarshal(r.body, &st)
	if !strings.HasPrefix(st.Message, prefix) {
		t.Fatalf("message %q", st.Message)
	}
	want = rvOutcome{code: 504, reason: "Timeout", tooLarge: true, retry: 1, message: st.Message}
	want.check(t, r)
}

// TestHugeResourceVersionWrites names versions at and past the end of
// uint64 in the bodies of update, patch, apply, scale and delete.
func TestHugeResourceVersionWrites(t *testing.T) {
	t.Parallel()
	e, _ := startGadgets(t, "rvw.example.com")
	cms := "/api/v1/namespaces/default/configmaps"
	gadgets := groupPath("rvw.example.com", "v1", "default", "gadgets")
	created := e.do("POST", cms, cm("w", map[string]string{"k": "v"}, nil)).mustCode(t, 201).obj(t)
	gadget := e.do("POST", gadgets, map[string]any{"apiVersion": "rvw.example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g1"}, "spec": map[string]any{"name": "a", "replicas": 1}}).mustCode(t, 201).obj(t)
	stored := rvOf(created)
	// The controllers' first writes (each namespace's default
	// ServiceAccount) may still be pending on a busy machine: the store
	// must be still before the refused writes.
	waitNamespacesFurnished(t, e)
	before := storeRevision(t, e)

	withRV := func(obj map[string]any, v string) map[string]any {
		b, _ := json.Marshal(obj)
		var c map[string]any
		_ = json.Unmarshal(b, &c)
		c["metadata"].(map[string]any)["resourceVersion"] = v
		return c
	}
	type write struct {
		name, method, path, contentType string
		body                            func(v string) any
		want                            func(v string) rvOutcome
	}
	gadgetGR := "gadgets.rvw.example.com"
	writes := []write{
		{"update", "PUT", cms + "/w", "", func(v string) any { return withRV(created, v) },
			func(v string) rvOutcome { return writeWith(v, "configmaps", "w") }},
		{"merge patch", "PATCH", cms + "/w", "application/merge-patch+json",
			func(v string) any { return fmt.Sprintf(`{"metadata":{"resourceVersion":%q}}`, v) },
			func(v string) rvOutcome { return writeWith(v, "configmaps", "w") }},
		{"json patch", "PATCH", cms + "/w", "application/json-patch+json",
			func(v string) any {
				return fmt.Sprintf(`[{"op":"replace","path":"/metadata/resourceVersion","value":%q}]`, v)
			},
			func(v string) rvOutcome { return writeWith(v, "configmaps", "w") }},
		{"apply", "PATCH", cms + "/w?fieldManager=rv", "application/apply-patch+yaml",
			func(v string) any {
				return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w","resourceVersion":%q}}`, v)
			},
			func(v string) rvOutcome { return writeWith(v, "configmaps", "w") }},
		{"update custom", "PUT", gadgets + "/g1", "", func(v string) any { return withRV(gadget, v) },
			func(v string) rvOutcome { return writeWith(v, gadgetGR, "g1") }},
		{"update custom status", "PUT", gadgets + "/g1/status", "", func(v string) any { return withRV(gadget, v) },
			func(v string) rvOutcome { return writeWith(v, gadgetGR, "g1") }},
		{"update custom scale", "PUT", gadgets + "/g1/scale", "",
			func(v string) any {
				return map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
					"metadata": map[string]any{"name": "g1", "namespace": "default", "resourceVersion": v}, "spec": map[string]any{"replicas": 2}}
			},
			func(v string) rvOutcome { return writeWith(v, gadgetGR, "g1") }},
		{"delete precondition", "DELETE", cms + "/w", "",
			func(v string) any { return fmt.Sprintf(`{"preconditions":{"resourceVersion":%q}}`, v) },
			// Preconditions compare the text: no parse, every value is stale.
			func(v string) rvOutcome {
				return rvOutcome{code: 409, reason: "Conflict", message: fmt.Sprintf(
					`Operation cannot be fulfilled on ConfigMap "w": the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified`, v, stored)}
			}},
		{"delete collection", "DELETE", cms + "?resourceVersion=", "", nil,
			func(v string) rvOutcome { return cachedRead(v, before) }},
		{"delete collection paged", "DELETE", cms + "?limit=1&resourceVersion=", "", nil,
			func(v string) rvOutcome { return storageRead(v, before) }},
	}
	t.Run("writes", func(t *testing.T) {
		for _, wr := range writes {
			for _, v := range hugeResourceVersions {
				t.Run(wr.name+" "+v, func(t *testing.T) {
					t.Parallel()
					var h []string
					if wr.contentType != "" {
						h = []string{"Content-Type", wr.contentType}
					}
					p, body := wr.path, any(nil)
					if wr.body == nil {
						p += v
					} else {
						body = wr.body(v)
					}
					r := e.do(wr.method, p, body, h...)
					wr.want(v).check(t, r)
				})
			}
		}
	})
	if now := storeRevision(t, e); now != before {
		t.Errorf("refused writes moved the store from %d to %d", before, now)
	}
	got := e.do("GET", cms+"/w", nil).mustCode(t, 200).obj(t)
	if rvOf(got) != stored || path(got, "data.k") != "v" {
		t.Errorf("the object changed: %v", got)
	}
}

// TestHugeResourceVersionWatch: a plain watch from a version no revision
// reaches is opened and stays silent, also while objects change; with
// sendInitialEvents it ends in the too-large ERROR event; past uint64 it
// is the unwrapped parse error.
func TestHugeResourceVersionWatch(t *testing.T) {
	t.Parallel()
	e := start(t)
	cms := "/api/v1/namespaces/default/configmaps"
	e.do("POST", cms, cm("before", nil, nil)).mustCode(t, 201)
	// The watches run at once; each must stay silent through a write.
	huge := []string{rvPastInt64, rvMaxUint64}
	var silent []*watcher
	var silentFrom []string
	for _, v := range huge {
		q := "allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=" + v
		silentFrom = append(silentFrom, cms+"?watch=1&"+q,
			cms+"?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&"+q,
			"/api/v1/watch/namespaces/default/configmaps?"+q,
			"/api/v1/watch/namespaces/default/configmaps/during?"+q)
	}
	for _, p := range silentFrom {
		w := e.watch(p)
		if ct := w.res.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("watch %s: Content-Type %q", p, ct)
		}
		silent = append(silent, w)
	}
	e.do("POST", cms, cm("during", nil, nil)).mustCode(t, 201)
	for i, w := range silent {
		w.waitClosed()
		select {
		case ev := <-w.events:
			t.Errorf("watch from %s delivered %s %v", silentFrom[i], ev.Type, ev.Object)
		default:
		}
	}
	current := storeRevision(t, e)
	// With initial events the watch waits for the store first: both at
	// once, each read to the end of its stream.
	streams := make([]chan *resp, len(huge))
	for i, v := range huge {
		streams[i] = make(chan *resp, 1)
		go func() {
			streams[i] <- e.doAsync(cms + "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=" + v)
		}()
	}
	for i, v := range huge {
		r := <-streams[i]
		want := fmt.Sprintf(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: %s, current: %d","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}}`, v, current)
		if r.code != 200 || r.header.Get("Content-Type") != "application/json" || strings.TrimSpace(string(r.body)) != want {
			t.Errorf("sendInitialEvents from %s: %d %q %s\n want %s", v, r.code, r.header.Get("Content-Type"), r.body, want)
		}
	}
	for _, q := range []string{"", "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"} {
		r := e.do("GET", cms+"?watch=1&resourceVersion="+rvPastUint64+q, nil)
		cachedRead(rvPastUint64, 0).check(t, r)
	}
}

// A continue token is JSON with an int64 revision: one past int64 does not
// decode, one far ahead of the store is too large, without a hint.
func TestContinueTokenHugeRevision(t *testing.T) {
	t.Parallel()
	// No controller writes: the current revision must stay put.
	e := start(t, withControllers("*", "-"+config.ControllerServiceAccount, "-"+config.ControllerRootCA))
	cms := "/api/v1/namespaces/default/configmaps"
	current := storeRevision(t, e)
	token := func(rv string) string {
		return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"v":"%s/v1","rv":%s,"start":"a\u0000"}`, platBrand.MetaGroup(), rv)))
	}
	r := e.do("GET", cms+"?limit=1&continue="+token(rvPastInt64), nil)
	rvOutcome{code: 400, reason: "BadRequest", message: "invalid continue token: continue key is not valid: json: cannot unmarshal number " +
		rvPastInt64 + " into Go struct field continueToken.rv of type int64"}.check(t, r)
	r = e.do("GET", cms+"?limit=1&continue="+token("9223372036854775807"), nil)
	rvOutcome{code: 504, reason: "Timeout", tooLarge: true,
		message: fmt.Sprintf("Timeout: Too large resource version: 9223372036854775807, current: %d", current)}.check(t, r)
	// A negative revision asks for the latest state.
	e.do("GET", cms+"?limit=1&continue="+token("-9223372036854775808"), nil).mustCode(t, http.StatusOK)
}
