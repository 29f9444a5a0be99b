//go:build linux

package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestKubectlAggregatedAPI: kubectl reaches an extension API server
// through platd, as through upstream's aggregator: `get --raw` of its
// group-version is the server's resource list, and `api-resources` lists
// its resources from aggregated discovery.
func TestKubectlAggregatedAPI(t *testing.T) {
	t.Parallel()
	const ns, name, group, version = "wardle", "api", "wardle.example.com", "v1alpha1"
	x := startExtensionServer(t, ns, name, group, version)
	cert, key := proxyClientFiles(t)
	k := newKubectlEnvFlags(t, "--proxy-client-cert-file", cert, "--proxy-client-key-file", key, "--enable-aggregator-routing")
	namespace, service, endpoints, apiService := x.backing(ns, name, k.brand)
	for _, c := range []struct {
		path string
		obj  map[string]any
	}{
		{"/api/v1/namespaces", namespace}, {"/api/v1/namespaces/" + ns + "/services", service},
		{"/api/v1/namespaces/" + ns + "/endpoints", endpoints}, {"/apis/" + k.brand.Group("apiregistration") + "/v1/apiservices", apiService},
	} {
		body, _ := json.Marshal(c.obj)
		if code, out, err := k.proc.do(http.MethodPost, c.path, body); err != nil || code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s %v", c.path, code, out, err)
		}
	}
	eventually(t, "the APIService available", func() bool {
		_, as := k.apiGet(t, "/apis/"+k.brand.Group("apiregistration")+"/v1/apiservices/"+version+"."+group)
		return at(as, "status", "conditions", 0, "status") == "True"
	})

	var rl map[string]any
	if err := json.Unmarshal([]byte(k.must(t, "get", "--raw", "/apis/"+group+"/"+version)), &rl); err != nil {
		t.Fatal(err)
	}
	if rl["kind"] != "APIResourceList" || rl["groupVersion"] != group+"/"+version || at(rl, "resources", 0, "name") != "flunders" {
		t.Errorf("get --raw: %v", rl)
	}
	var out string
	eventually(t, "api-resources listing the extension's resources", func() bool {
		out = k.must(t, "api-resources", "--api-group", group, "--no-headers")
		return strings.Contains(out, "flunders")
	})
	if f := strings.Fields(out); len(f) != 5 || f[0] != "flunders" || f[1] != "fl" || f[2] != group+"/"+version || f[3] != "true" || f[4] != "Flunder" {
		t.Errorf("api-resources: %q", out)
	}
}
