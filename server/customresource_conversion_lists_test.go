package server_test

import (
	"strings"
	"testing"
)

// A list is converted in one review however large: the webhook's answer,
// past the request body limit here (4 MiB), is read whole.
func TestCustomResourceConversionOfALargeList(t *testing.T) {
	t.Parallel()
	e := start(t)
	hook := newHostsWebhook(t)
	const group = "large.example.com"
	e.do("POST", crdPath, hostsCRD(group, "v2", hook.clientConfig(), "v1")).mustCode(t, 201)
	v1, v2 := groupPath(group, "v1", "default", "hosts"), groupPath(group, "v2", "default", "hosts")
	eventually(t, "served", func() bool { return e.do("GET", v2, nil).code == 200 })
	big := strings.Repeat("x", 1<<20)
	names := []string{"a", "b", "c", "d"}
	for _, n := range names {
		e.do("POST", v2, map[string]any{"apiVersion": group + "/v2", "kind": "Host", "metadata": map[string]any{"name": n},
			"spec": map[string]any{"host": n + big, "port": "80"}}).mustCode(t, 201)
	}
	hook.take()
	l := e.do("GET", v1, nil).mustCode(t, 200).obj(t)
	items, _ := l["items"].([]any)
	if len(items) != len(names) {
		t.Fatalf("list of 4 MiB through v1: %d items", len(items))
	}
	for i, n := range names {
		if at(items[i], "spec", "hostPort") != n+big+":80" {
			t.Errorf("item %d: not converted", i)
		}
	}
	if n := len(hook.take()); n != 1 {
		t.Errorf("list converted in %d reviews, want 1", n)
	}
}

// hostsCRDSelectable is hostsCRD with a selectable field in each version.
func hostsCRDSelectable(group string, cc map[string]any) map[string]any {
	crd := hostsCRD(group, "v2", cc, "v1")
	vs := crd["spec"].(map[string]any)["versions"].([]any)
	vs[0].(map[string]any)["selectableFields"] = []any{map[string]any{"jsonPath": ".spec.hostPort"}}
	vs[1].(map[string]any)["selectableFields"] = []any{map[string]any{"jsonPath": ".spec.host"}}
	return crd
}

// createHosts creates hosts of the given names through v2.
func createHosts(t *testing.T, e *env, group string, names ...string) {
	t.Helper()
	v2 := groupPath(group, "v2", "default", "hosts")
	eventually(t, "served", func() bool { return e.do("GET", v2, nil).code == 200 })
	for _, n := range names {
		e.do("POST", v2, map[string]any{"apiVersion": group + "/v2", "kind": "Host", "metadata": map[string]any{"name": n},
			"spec": map[string]any{"host": n + ".example.org", "port": "80"}}).mustCode(t, 201)
	}
}

// convertedObjects counts the objects the reviews sent.
func convertedObjects(reviews []map[string]any) int {
	n := 0
	for _, rv := range reviews {
		n += len(at(rv, "request", "objects").([]any))
	}
	return n
}

// Objects of a converted type are converted once, all the objects of a
// list in one review, before they are selected: what is selected is what
// is served, and a conversion that fails fails the list, with or without
// selectors, as upstream's.
func TestCustomResourceSelectionOfConvertedObjects(t *testing.T) {
	t.Parallel()
	e := start(t)
	hook := newHostsWebhook(t)
	const group = "select.example.com"
	e.do("POST", crdPath, hostsCRDSelectable(group, hook.clientConfig())).mustCode(t, 201)
	v1 := groupPath(group, "v1", "default", "hosts")
	createHosts(t, e, group, "a", "b", "c")
	tests := []struct {
		query string
		want  []string
	}{
		{"fieldSelector=spec.hostPort%3Db.example.org:80", []string{"b"}},
		{"fieldSelector=spec.hostPort!%3Dzzz", []string{"a", "b", "c"}},
		{"fieldSelector=spec.hostPort!%3Db.example.org:80&limit=1", []string{"a"}},
		{"labelSelector=converted%3Dyes", []string{"a", "b", "c"}},
		{"labelSelector=converted%3Dyes,missing", nil},
	}
	hook.setMode(hostsMetadata)
	hook.take()
	for _, tt := range tests {
		l := e.do("GET", v1+"?"+tt.query, nil).mustCode(t, 200).obj(t)
		var got []string
		for _, it := range l["items"].([]any) {
			got = append(got, at(it, "metadata", "name").(string))
			if at(it, "metadata", "labels", "converted") != "yes" || !strings.HasSuffix(at(it, "spec", "hostPort").(string), ":80") {
				t.Errorf("%s: item not converted: %v", tt.query, it)
			}
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: selected %v, want %v", tt.query, got, tt.want)
		}
		if reviews := hook.take(); len(reviews) != 1 || convertedObjects(reviews) > 3 {
			t.Errorf("%s: %d reviews of %d objects, want 1 of at most 3", tt.query, len(reviews), convertedObjects(reviews))
		}
	}
	meta := e.do("GET", v1+"?labelSelector=converted%3Dyes", nil, "Accept", "application/json;as=PartialObjectMetadataList;v=v1;g="+platBrand.MetaGroup()).mustCode(t, 200).obj(t)
	if items, _ := meta["items"].([]any); len(items) != 3 || at(items[0], "metadata", "labels", "converted") != "yes" {
		t.Errorf("metadata list: %v", meta)
	}
	one := e.do("GET", v1+"/a", nil, "Accept", "application/json;as=PartialObjectMetadata;v=v1;g="+platBrand.MetaGroup()).mustCode(t, 200).obj(t)
	if at(one, "metadata", "labels", "converted") != "yes" {
		t.Errorf("metadata: %v", one)
	}

	hook.setMode(hostsWrongUID)
	for _, q := range []string{"", "?fieldSelector=spec.hostPort%3Da.example.org:80", "?fieldSelector=spec.hostPort!%3Dzzz", "?labelSelector=app"} {
		r := e.do("GET", v1+q, nil).mustCode(t, 500).obj(t)
		if msg, _ := r["message"].(string); !strings.HasPrefix(msg, "conversion webhook for "+group+"/v2, Kind=HostList failed: ") {
			t.Errorf("list %q with the webhook failing: %v", q, r)
		}
	}
}

// A watch of a converted type with a field selector ends with the
// failure when an event's object cannot be converted, rather than leave
// the event out.
func TestCustomResourceWatchSelectionFailure(t *testing.T) {
	t.Parallel()
	e := start(t)
	hook := newHostsWebhook(t)
	const group = "watchfail.example.com"
	e.do("POST", crdPath, hostsCRDSelectable(group, hook.clientConfig())).mustCode(t, 201)
	v1 := groupPath(group, "v1", "default", "hosts")
	createHosts(t, e, group, "a")
	w := e.watch(v1 + "?watch=true&fieldSelector=spec.hostPort%3Db.example.org:80")
	hook.setMode(hostsWrongUID)
	createHosts(t, e, group, "b")
	ev := w.next()
	if msg, _ := ev.Object["message"].(string); ev.Type != "ERROR" || !strings.HasPrefix(msg, "conversion webhook for "+group+"/v2, Kind=Host failed: ") {
		t.Errorf("event: %s %v, want the failure", ev.Type, ev.Object)
	}
	w.waitClosed()
	if r := e.do("GET", v1+"?watch=true&fieldSelector=spec.hostPort%3Db.example.org:80", nil); r.code != 500 {
		t.Errorf("watch whose initial objects cannot be converted: %d %s", r.code, r.body)
	}
}

// The watchers of one version share the conversion of each event, as
// upstream's cache of that version converts each object once.
func TestCustomResourceWatchersShareConversions(t *testing.T) {
	t.Parallel()
	e := start(t)
	hook := newHostsWebhook(t)
	const group = "watchers.example.com"
	e.do("POST", crdPath, hostsCRD(group, "v2", hook.clientConfig(), "v1")).mustCode(t, 201)
	v1 := groupPath(group, "v1", "default", "hosts")
	createHosts(t, e, group)
	var ws []*watcher
	for _, q := range []string{"", "", "&labelSelector=converted", "&fieldSelector=metadata.name%3Da"} {
		ws = append(ws, e.watch(v1+"?watch=true"+q))
	}
	hook.setMode(hostsMetadata)
	hook.take()
	createHosts(t, e, group, "a")
	for i, w := range ws {
		ev := w.expect("ADDED", "a")
		if path(ev.Object, "spec.hostPort") != "a.example.org:80" || path(ev.Object, "metadata.labels.converted") != "yes" {
			t.Errorf("watcher %d: %v", i, ev.Object)
		}
	}
	if n := len(hook.take()); n != 1 {
		t.Errorf("one event seen by %d watchers of v1 made %d reviews, want 1", len(ws), n)
	}
}
