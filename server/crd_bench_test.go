package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// benchCRD is a CRD of group g with one namespaced version whose spec
// holds a string map like a ConfigMap's data, and one validation rule.
func benchCRD(plural, group string) []byte {
	b, _ := json.Marshal(map[string]any{
		"apiVersion": platBrand.Group("apiextensions") + "/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group},
		"spec": map[string]any{"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": plural, "kind": "Bench" + plural},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object",
						"x-kubernetes-validations": []any{map[string]any{"rule": "size(self.data) <= 32", "message": "too many entries"}},
						"properties": map[string]any{
							"data":     map[string]any{"type": "object", "maxProperties": 64, "additionalProperties": map[string]any{"type": "string", "maxLength": 4096}},
							"replicas": map[string]any{"type": "integer", "default": 1},
						}},
					"status": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
				}}}}}},
	})
	return b
}

// benchCustomResource is custom resource i: the benchmark ConfigMap's
// metadata and data under spec.
func benchCustomResource(apiVersion, kind string) func(int) []byte {
	return func(i int) []byte {
		var cm map[string]any
		_ = json.Unmarshal(benchConfigMap(i), &cm)
		b, _ := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": cm["metadata"],
			"spec": map[string]any{"data": cm["data"]}})
		return b
	}
}

var crdCollection = "/apis/" + platBrand.Group("apiextensions") + "/v1/customresourcedefinitions"

// BenchmarkCRDToFirstCustomResource times a CRD create and the create of
// its first custom resource in the next request: the wait envtest users
// know. Target: 20 ms.
func BenchmarkCRDToFirstCustomResource(b *testing.B) {
	platdBinary(b)
	p := startPlatd(b, b.TempDir())
	defer p.terminate()
	benchNamespace(b, p)
	c := p.newClient()
	defer c.CloseIdleConnections()
	b.ResetTimer()
	for i := range b.N {
		plural, group := fmt.Sprintf("things%d", i), "bench.example.com"
		if code, body, err := doWith(c, p.url, http.MethodPost, crdCollection, benchCRD(plural, group)); err != nil || code != http.StatusCreated {
			b.Fatalf("CRD create: %d %v %.300s", code, err, body)
		}
		cr := benchCustomResource(group+"/v1", "Bench"+plural)(i)
		if code, body, err := doWith(c, p.url, http.MethodPost, "/apis/"+group+"/v1/namespaces/"+benchNS+"/"+plural, cr); err != nil || code != http.StatusCreated {
			b.Fatalf("first custom resource: %d %v %.300s", code, err, body)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/crd+cr")
}

// BenchmarkCustomResourceCreates times 10,000 creates of a custom
// resource with one validation rule from 16 clients against a fresh
// durable server, and ConfigMap creates of the same content in the same
// run. Target: custom resources at 80% of the ConfigMap rate or more.
func BenchmarkCustomResourceCreates(b *testing.B) {
	platdBinary(b)
	const group = "bench.example.com"
	var crTotal, cmTotal time.Duration
	for range b.N {
		p := startPlatd(b, b.TempDir())
		benchNamespace(b, p)
		if code, body, err := p.do(http.MethodPost, crdCollection, benchCRD("configs", group)); err != nil || code != http.StatusCreated {
			b.Fatalf("CRD create: %d %v %.300s", code, err, body)
		}
		crTotal += benchRequestsTo(b, p, "/apis/"+group+"/v1/namespaces/"+benchNS+"/configs", benchCustomResource(group+"/v1", "Benchconfigs"))
		p.terminate()
		p = startPlatd(b, b.TempDir())
		benchNamespace(b, p)
		cmTotal += benchCreate(b, p, 0, benchObjects, 16)
		p.terminate()
	}
	cr := float64(benchObjects*b.N) / crTotal.Seconds()
	cm := float64(benchObjects*b.N) / cmTotal.Seconds()
	b.ReportMetric(cr, "cr-creates/s")
	b.ReportMetric(cm, "cm-creates/s")
	b.ReportMetric(100*cr/cm, "%-of-configmaps")
}

// benchRequestsTo creates benchObjects objects at collection from 16
// clients and returns the wall time.
func benchRequestsTo(b *testing.B, p *platdProc, collection string, body func(int) []byte) time.Duration {
	b.Helper()
	bodies := make([][]byte, benchObjects)
	for i := range bodies {
		bodies[i] = body(i)
	}
	return benchRequests(b, p, benchObjects, 16, func(c *http.Client, i int) string {
		code, resp, err := doWith(c, p.url, http.MethodPost, collection, bodies[i])
		if err != nil || code != http.StatusCreated {
			return fmt.Sprintf("create %d: %d %v %.200s", i, code, err, resp)
		}
		return ""
	})
}

// BenchmarkThousandCRDs registers 1,000 CRDs, restarts the server and
// reports the start to ready time, the idle memory and the time of an
// aggregated discovery GET. Targets: 1 s, 150 MB, 20 ms.
func BenchmarkThousandCRDs(b *testing.B) {
	platdBinary(b)
	const crds = 1000
	var start, discovery time.Duration
	var rss float64
	for range b.N {
		dir := b.TempDir()
		p := startPlatd(b, dir)
		benchRequests(b, p, crds, 16, func(c *http.Client, i int) string {
			code, body, err := doWith(c, p.url, http.MethodPost, crdCollection, benchCRD(fmt.Sprintf("things%d", i), fmt.Sprintf("g%d.example.com", i%100)))
			if err != nil || code != http.StatusCreated {
				return fmt.Sprintf("CRD %d: %d %v %.200s", i, code, err, body)
			}
			return ""
		})
		p.terminate()
		p = launchPlatd(b, dir)
		start += p.waitReady()
		rss += residentMB(b, p.pid())
		const gets = 20
		began := time.Now()
		for range gets {
			code, body, err := p.do(http.MethodGet, "/apis", nil, "Accept", "application/json;g=apidiscovery."+platBrand.Domain+";v=v2;as=APIGroupDiscoveryList")
			if err != nil || code != http.StatusOK || len(body) < crds*100 {
				b.Fatalf("discovery: %d %v %d bytes", code, err, len(body))
			}
		}
		discovery += time.Since(began) / gets
		p.terminate()
	}
	b.ReportMetric(millis(start)/float64(b.N), "ms/start")
	b.ReportMetric(rss/float64(b.N), "MB-idle")
	b.ReportMetric(millis(discovery)/float64(b.N), "ms/discovery")
}

// BenchmarkListCustomResources measures one full list of 10,000 custom
// resources of a CRD with conversion strategy None, in its storage
// version, in JSON and as a Table, as BenchmarkListAll lists ConfigMaps:
// the objects are served from their stored bytes as ConfigMaps are.
func BenchmarkListCustomResources(b *testing.B) {
	const group = "bench.example.com"
	p := startPlatd(b, b.TempDir())
	benchNamespace(b, p)
	if code, body, err := p.do(http.MethodPost, crdCollection, benchCRD("configs", group)); err != nil || code != http.StatusCreated {
		b.Fatalf("CRD create: %d %v %.300s", code, err, body)
	}
	collection := "/apis/" + group + "/v1/namespaces/" + benchNS + "/configs"
	benchRequestsTo(b, p, collection, benchCustomResource(group+"/v1", "Benchconfigs"))
	for _, c := range []struct {
		name, accept string
		check        func(body []byte) int
	}{
		{"h2", "application/json", jsonItems},
		{"h2/table", "application/json;as=Table;v=v1;g=" + platBrand.MetaGroup(), tableRows},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchListPathAs(b, p, p.client, collection, c.accept, func(body []byte) bool { return c.check(body) == benchObjects })
		})
	}
	p.terminate()
}
