package schema

import (
	"reflect"
	"testing"

	"platd/config"
)

func testBrand(t testing.TB, name string) config.Brand {
	t.Helper()
	b, err := config.LookupBrand(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestApplyDefaults(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	svc := c.ByGVK("", "v1", "Service")
	obj := map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}, map[string]any{"port": int64(81), "protocol": "UDP"}}}}
	ApplyDefaults(obj, svc)
	ports := obj["spec"].(map[string]any)["ports"].([]any)
	if p := ports[0].(map[string]any)["protocol"]; p != "TCP" {
		t.Errorf("port 0 protocol = %v", p)
	}
	if p := ports[1].(map[string]any)["protocol"]; p != "UDP" {
		t.Errorf("port 1 protocol = %v", p)
	}
	if m, ok := obj["metadata"].(map[string]any); !ok || len(m) != 0 {
		t.Errorf("metadata = %#v", obj["metadata"])
	}
	// Defaults are copies: changing one object leaves the next untouched.
	obj["metadata"].(map[string]any)["name"] = "x"
	again := map[string]any{}
	ApplyDefaults(again, svc)
	if !reflect.DeepEqual(again["metadata"], map[string]any{}) {
		t.Errorf("default shared: %#v", again["metadata"])
	}
}
