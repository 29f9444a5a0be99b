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
