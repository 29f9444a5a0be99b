package server_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"platd/config"
	"platd/server"
)

func withRuntimeConfig(values ...string) option {
	return func(o *config.Options) { o.RuntimeConfig = values }
}

// TestRuntimeConfig checks that --runtime-config switches resources and
// group-versions off and on, with discovery and OpenAPI following, and
// that stored objects of a disabled resource are kept.
func TestRuntimeConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir, withRuntimeConfig("/v1/limitranges=false")))
	// api/v1/<resource> forms name the whole group-version upstream, so a
	// single core resource is switched with /v1/<resource>.
	for _, p := range []string{"/api/v1/namespaces/default/limitranges", "/api/v1/limitranges"} {
		e.do("GET", p, nil).mustCode(t, 404)
	}
	e.do("GET", "/api/v1/namespaces/default/configmaps", nil).mustCode(t, 200)
	disc := string(e.do("GET", "/api/v1", nil).mustCode(t, 200).body)
	if strings.Contains(disc, `"limitranges"`) || !strings.Contains(disc, `"configmaps"`) {
		t.Errorf("discovery after disabling limitranges: %s", disc)
	}
	oa := string(e.do("GET", "/openapi/v3/api/v1", nil).mustCode(t, 200).body)
	if strings.Contains(oa, "/limitranges") {
		t.Error("OpenAPI still has limitranges paths")
	}
	e.stop()

	// Objects stored while a resource is served survive its disabling.
	e = startWith(t, testOptions(t, dir))
	e.do("POST", "/api/v1/namespaces/default/limitranges", `{"metadata":{"name":"kept"},"spec":{"limits":[{"type":"Container","max":{"cpu":"1"}}]}}`).mustCode(t, 201)
	e.stop()
	e = startWith(t, testOptions(t, dir, withRuntimeConfig("api/all=false", "api/v1=true", "/v1/limitranges=false")))
	e.do("GET", "/api/v1/namespaces/default/limitranges/kept", nil).mustCode(t, 404)
	e.stop()
	e = startWith(t, testOptions(t, dir))
	e.do("GET", "/api/v1/namespaces/default/limitranges/kept", nil).mustCode(t, 200)
}

// TestRuntimeConfigUnknownKey checks that a key naming an API platd does
// not have stops it before anything is written.
func TestRuntimeConfigUnknownKey(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	o := testOptions(t, dir, withRuntimeConfig("widgets.example.com/v1=true"))
	_, err := server.New(context.Background(), o, quietLog())
	if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "unknown api groups widgets.example.com") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("data directory written before the flag was refused: %v", err)
	}
}
