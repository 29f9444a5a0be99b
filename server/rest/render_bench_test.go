package rest

import (
	"fmt"
	"net/http/httptest"
	"strings"
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

// apibenchItems returns n stored ConfigMaps as the apibench load tool's
// create leaves them: a 256-byte payload, a label and the managedFields
// entry of its create, about 600 bytes.
func apibenchItems(tb testing.TB, d *registry.Descriptor, n int) []bolt.KV {
	items := make([]bolt.KV, n)
	payload := strings.Repeat("Pc7EiuSaTGe9B4DZJoG0xzfwn0CskskV", 8)
	for i := range items {
		obj := Object{
			"metadata": map[string]any{
				"name": fmt.Sprintf("cm-%d", i), "namespace": "bench", "uid": uuid.New(),
				"resourceVersion": fmt.Sprint(100 + i), "creationTimestamp": "2026-11-26T23:26:24Z",
				"labels": map[string]any{"app": "apibench"},
				"managedFields": []any{map[string]any{
					"manager": "apibench", "operation": "Update", "apiVersion": "v1", "time": "2026-11-26T23:26:24Z",
					"fieldsType": "FieldsV1", "fieldsV1": map[string]any{
						"f:data":     map[string]any{".": map[string]any{}, "f:payload": map[string]any{}},
						"f:metadata": map[string]any{"f:labels": map[string]any{".": map[string]any{}, "f:app": map[string]any{}}},
					},
				}},
			},
			"data": map[string]any{"payload": payload},
		}
		items[i] = bolt.KV{Key: d.Key("bench", metaString(obj, "name")), Value: schema.Encode(nil, obj, d.Schema), ModRevision: int64(100 + i)}
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
// without the network, for two shapes of item: "app" (about 800 bytes,
// escaped strings, no managedFields) and "apibench" (the load tool's). The
// CPU time per list is reported beside the wall time, which a shared
// machine inflates.
func BenchmarkRenderList(b *testing.B) {
	h, d := configMapHandler(b)
	for _, shape := range []struct {
		name  string
		items []bolt.KV
	}{
		{"app", benchItems(b, d, 10000)},
		{"apibench", apibenchItems(b, d, 10000)},
	} {
		b.Run(shape.name, func(b *testing.B) { benchRenderList(b, h, d, shape.items) })
	}
}

func benchRenderList(b *testing.B, h *Handler, d *registry.Descriptor, items []bolt.KV) {
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
			c0 := cpuTime(b)
			for range b.N {
				rd, err := h.newRenderer(r, d, c.out)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := rd.list(listMeta{rv: "1"}, items); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-c0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}
