package server_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// names returns the metadata.name of each item of a list.
func names(t *testing.T, list map[string]any) []string {
	t.Helper()
	items, ok := list["items"].([]any)
	if !ok {
		t.Fatalf("list without items array: %v", list)
	}
	out := []string{}
	for _, it := range items {
		out = append(out, path(it.(map[string]any), "metadata.name").(string))
	}
	return out
}

func createCMs(t *testing.T, e *env, ns string, n int, labels func(i int) map[string]string) {
	t.Helper()
	for i := 0; i < n; i++ {
		var l map[string]string
		if labels != nil {
			l = labels(i)
		}
		e.do("POST", "/api/v1/namespaces/"+ns+"/configmaps", cm(fmt.Sprintf("cm-%c", 'a'+i), map[string]string{"i": strconv.Itoa(i)}, l)).mustCode(t, 201)
	}
}

func TestListSelectors(t *testing.T) {
	t.Parallel()
	e := start(t)
	createCMs(t, e, "default", 5, func(i int) map[string]string {
		tier := "front"
		if i%2 == 1 {
			tier = "back"
		}
		return map[string]string{"tier": tier, "idx": strconv.Itoa(i)}
	})
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "other"}}).mustCode(t, 201)
	e.do("POST", "/api/v1/namespaces/other/configmaps", cm("cm-z", nil, map[string]string{"tier": "back"})).mustCode(t, 201)

	cases := []struct {
		path string
		want string
	}{
		{"/api/v1/namespaces/default/configmaps?labelSelector=tier%3Dfront", "cm-a,cm-c,cm-e"},
		{"/api/v1/namespaces/default/configmaps?labelSelector=tier!%3Dfront", "cm-b,cm-d"},
		{"/api/v1/namespaces/default/configmaps?labelSelector=idx+in+(3,4),!missing", "cm-d,cm-e"},
		{"/api/v1/namespaces/default/configmaps?labelSelector=idx+notin+(0,1,2)", "cm-d,cm-e"},
		{"/api/v1/namespaces/default/configmaps?labelSelector=idx>2", "cm-d,cm-e"},
		{"/api/v1/namespaces/default/configmaps?labelSelector=missing", ""},
		{"/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dcm-d", "cm-d"},
		{"/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name!%3Dcm-d", "cm-a,cm-b,cm-c,cm-e"},
		{"/api/v1/configmaps?labelSelector=tier%3Dback", "cm-b,cm-d,cm-z"},
		{"/api/v1/configmaps?fieldSelector=metadata.namespace%3Dother", "cm-z"},
	}
	for _, c := range cases {
		got := strings.Join(names(t, e.do("GET", c.path, nil).mustCode(t, 200).obj(t)), ",")
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.path, got, c.want)
		}
	}
	bad := e.do("GET", "/api/v1/namespaces/default/configmaps?fieldSelector=data.k%3Dv", nil).mustCode(t, 400).obj(t)
	if bad["message"] != `"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"` {
		t.Errorf("unknown field selector: %v", bad["message"])
	}
	bad = e.do("GET", "/api/v1/namespaces/default/configmaps?labelSelector=a%3D%3D%3Db", nil).mustCode(t, 400).obj(t)
	if bad["message"] != "unable to parse requirement: found '=', expected: identifier" {
		t.Errorf("bad label selector: %v", bad["message"])
	}
	// Per-type field selectors.
	e.do("POST", "/api/v1/namespaces/default/secrets", map[string]any{"metadata": map[string]any{"name": "s1"}, "type": "example.com/x"}).mustCode(t, 201)
	e.do("POST", "/api/v1/namespaces/default/secrets", map[string]any{"metadata": map[string]any{"name": "s2"}}).mustCode(t, 201)
	if got := names(t, e.do("GET", "/api/v1/namespaces/default/secrets?fieldSelector=type%3DOpaque", nil).mustCode(t, 200).obj(t)); strings.Join(got, ",") != "s2" {
		t.Errorf("secret type selector: %v", got)
	}
}

func decodeContinue(t *testing.T, tok string) map[string]any {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatalf("continue token %q: %v", tok, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestListChunking(t *testing.T) {
	t.Parallel()
	e := start(t)
	createCMs(t, e, "default", 5, nil)
	base := "/api/v1/namespaces/default/configmaps"

	p1 := e.do("GET", base+"?limit=2", nil).mustCode(t, 200).obj(t)
	if got := strings.Join(names(t, p1), ","); got != "cm-a,cm-b" {
		t.Fatalf("page 1: %s", got)
	}
	rv := path(p1, "metadata.resourceVersion").(string)
	if n, _ := path(p1, "metadata.remainingItemCount").(float64); n != 3 {
		t.Errorf("remainingItemCount %v", path(p1, "metadata.remainingItemCount"))
	}
	tok := path(p1, "metadata.continue").(string)
	ct := decodeContinue(t, tok)
	if ct["v"] != platBrand.MetaGroup()+"/v1" || fmt.Sprint(ct["rv"]) != rv || ct["start"] != "/cm-b\x00" {
		t.Errorf("continue token %v", ct)
	}
	// A write between pages does not show: pages read one snapshot.
	e.do("POST", base, cm("cm-bb", nil, nil)).mustCode(t, 201)
	e.do("DELETE", base+"/cm-e", nil).mustCode(t, 200)
	p2 := e.do("GET", base+"?limit=2&continue="+tok, nil).mustCode(t, 200).obj(t)
	if got := strings.Join(names(t, p2), ","); got != "cm-c,cm-d" {
		t.Errorf("page 2: %s", got)
	}
	if path(p2, "metadata.resourceVersion") != rv {
		t.Errorf("page 2 revision %v, want %s", path(p2, "metadata.resourceVersion"), rv)
	}
	p3 := e.do("GET", base+"?limit=2&continue="+path(p2, "metadata.continue").(string), nil).mustCode(t, 200).obj(t)
	if got := strings.Join(names(t, p3), ","); got != "cm-e" {
		t.Errorf("page 3: %s", got)
	}
	if _, has := p3["metadata"].(map[string]any)["continue"]; has {
		t.Error("last page has a continue token")
	}
	if _, has := p3["metadata"].(map[string]any)["remainingItemCount"]; has {
		t.Error("last page has remainingItemCount")
	}
	// resourceVersion=0 ignores limit.
	all := e.do("GET", base+"?limit=2&resourceVersion=0", nil).mustCode(t, 200).obj(t)
	if got := len(names(t, all)); got != 5 {
		t.Errorf("rv=0 list has %d items, want 5", got)
	}
	// Exact list at the first page's revision shows the old state.
	old := e.do("GET", base+"?resourceVersion="+rv+"&resourceVersionMatch=Exact", nil).mustCode(t, 200).obj(t)
	if got := strings.Join(names(t, old), ","); got != "cm-a,cm-b,cm-c,cm-d,cm-e" || path(old, "metadata.resourceVersion") != rv {
		t.Errorf("exact list: %s at %v", got, path(old, "metadata.resourceVersion"))
	}
	// continue with a resourceVersion is refused.
	r := e.do("GET", base+"?limit=2&resourceVersion=5&continue="+tok, nil).mustCode(t, 400).obj(t)
	if r["message"] != "specifying resource version is not allowed when using continue" {
		t.Errorf("continue+rv: %v", r["message"])
	}
	bad := e.do("GET", base+"?limit=2&continue=!!!", nil).mustCode(t, 400).obj(t)
	if !strings.HasPrefix(bad["message"].(string), "invalid continue token: continue key is not valid: ") {
		t.Errorf("bad token: %v", bad["message"])
	}
}

func TestListParameterErrors(t *testing.T) {
	t.Parallel()
	e := start(t)
	base := "/api/v1/namespaces/default/configmaps"
	meta := platBrand.MetaGroup()
	cases := []struct {
		q, msg string
		code   int
	}{
		{"limit=abc", `strconv.ParseInt: parsing "abc": invalid syntax`, 400},
		{"resourceVersionMatch=NotOlderThan", `ListOptions.` + meta + ` "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`, 422},
		{"resourceVersionMatch=Exact", `ListOptions.` + meta + ` "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`, 422},
		{"resourceVersion=0&resourceVersionMatch=Exact", `ListOptions.` + meta + ` "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`, 422},
		{"resourceVersion=1&resourceVersionMatch=Foo", `ListOptions.` + meta + ` "" is invalid: resourceVersionMatch: Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""`, 422},
		{"sendInitialEvents=true", `ListOptions.` + meta + ` "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`, 422},
		// Every broken rule is reported, in upstream's order.
		{"resourceVersionMatch=Foo", `ListOptions.` + meta + ` "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, ` +
			`resourceVersionMatch: Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""]`, 422},
		{"resourceVersion=1&resourceVersionMatch=Exact&continue=x&sendInitialEvents=1", `ListOptions.` + meta + ` "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, ` +
			`sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list]`, 422},
		{"watch=1&sendInitialEvents=true&continue=x", `ListOptions.` + meta + ` "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`, 422},
		{"watch=1&resourceVersionMatch=NotOlderThan&continue=x", `ListOptions.` + meta + ` "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, ` +
			`resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided]`, 422},
		// A boolean parameter is true unless "0" or "false", as upstream
		// reads it: an empty or unusual value is no error.
		{"watch=1&sendInitialEvents=", `ListOptions.` + meta + ` "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`, 422},
		{"watch=1&sendInitialEvents=yes&allowWatchBookmarks=f", `ListOptions.` + meta + ` "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`, 422},
	}
	for _, c := range cases {
		st := e.do("GET", base+"?"+c.q, nil).mustCode(t, c.code).obj(t)
		if st["message"] != c.msg {
			t.Errorf("%s:\n got %v\nwant %s", c.q, st["message"], c.msg)
		}
		if c.code == 422 && (path(st, "details.group") != meta || path(st, "details.kind") != "ListOptions") {
			t.Errorf("%s: details %v", c.q, st["details"])
		}
	}
}

func TestListEmpty(t *testing.T) {
	t.Parallel()
	e := start(t)
	r := e.do("GET", "/api/v1/namespaces/default/secrets", nil).mustCode(t, 200)
	if !strings.Contains(string(r.body), `"items":[]`) {
		t.Errorf("empty list body: %s", r.body)
	}
}
