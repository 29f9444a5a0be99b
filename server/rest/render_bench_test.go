package rest

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"platd/bolt"
	"platd/config"
	"platd/server/builtin"
	"platd/server/registry"
	"platd/server/schema"
	"platd/uuid"
)

// benchItems returns n stored ConfigMaps of about 800 bytes.
func benchItems(tb testing.TB, d *registry.Descriptor, n int) []bolt.KV {
	items := make([]bolt.KV, n)
	for i := range items {
		obj := Object{
			"metadata": map[string]any{
				"name": fmt.Sprintf("checkout-config-%05d", i), "namespace": "bench", "uid": uuid.New(),
				"resourceVersion": "1", "creationTimestamp": "2026-01-02T03:04:05Z",
				"labels":      map[string]any{"app": fmt.Sprintf("checkout-%02d", i%40), "tier": "backend", "env": "staging"},
				"annotations": map[string]any{"owner": "team-payments", "config-revision": fmt.Sprint(i)},
			},
			"data": map[string]any{
				"application.properties": "server.port=8080\nspring.datasource.url=jdbc:postgresql://db.internal:5432/checkout\nspring.jpa.open-in-view=false\ncache.ttl=300s\nfeature.new-cart=true\nlogging.level.root=INFO\n",
				"LOG_LEVEL":              "info", "HTTP_TIMEOUT": "30s", "PAYMENTS_ENDPOINT": "https://payments.internal/v2/charge",
				"RETRY_POLICY": `{"maxAttempts":5,"backoff":"exponential","initialDelay":"200ms"}`,
			},
		}
		items[i] = bolt.KV{Key: d.Key("bench", metaString(obj, "name")), Value: schema.Encode(nil, obj, d.Schema)}
	}
	return items
}

// configMapHandler is a Handler of the built-in types and its ConfigMaps.
func configMapHandler(tb testing.TB) (*Handler, *registry.Descriptor) {
	br, _ := config.LookupBrand("plat")
	cat, err := schema.Load(br)
	if err != nil {
		tb.Fatal(err)
	}
	reg := registry.New()
	if err := builtin.Register(reg, cat, br); err != nil {
		tb.Fatal(err)
	}
	return New(Config{Registry: reg, Brand: br, Kinds: cat.ByGVK}), reg.Lookup("", "v1", "configmaps")
}

// BenchmarkRenderList renders a list of 10,000 ConfigMaps in each form,
// without the network.
func BenchmarkRenderList(b *testing.B) {
	h, d := configMapHandler(b)
	items := benchItems(b, d, 10000)
	for _, c := range []struct {
		name string
		out  output
	}{
		{"json", output{format: formatJSON}},
		{"protobuf", output{format: formatProtobuf}},
		{"table", output{format: formatJSON, as: asTable, asVersion: metaV1}},
		{"metadata", output{format: formatJSON, as: asMetadataList, asVersion: metaV1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
			b.ReportAllocs()
			for range b.N {
				rd, err := h.newRenderer(r, d, c.out)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := rd.list(listMeta{rv: "1"}, items); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
