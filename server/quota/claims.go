package quota

import (
	"strings"
	"time"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

// claimResources are the names a claim's usage carries, each also by
// storage class (<class><classSuffix><name>).
var claimResources = []string{"persistentvolumeclaims", "requests.storage"}

// claims measures persistent volume claims: their count and the storage
// they request, overall and per storage class, as upstream's claim
// evaluator. Updates are charged too: a claim may be expanded.
type claims struct {
	// classSuffix joins a storage class and a resource name:
	// .storageclass.<storage group>/
	classSuffix string
	// classAnnotation is the beta annotation naming a claim's class.
	classAnnotation string
}

// Claims returns the evaluator of persistent volume claims.
func Claims(b config.Brand) registry.QuotaEvaluator {
	return claims{classSuffix: ".storageclass." + b.Group("storage") + "/", classAnnotation: "volume.beta." + b.Label("storage-class")}
}

func (c claims) MatchingResources(names []string) []string {
	var out []string
	count := CountName("", "persistentvolumeclaims")
	for _, n := range names {
		matched := n == count
		for _, r := range claimResources {
			matched = matched || n == r || strings.HasSuffix(n, c.classSuffix+r)
		}
		if matched {
			out = append(out, n)
		}
	}
	return out
}

func (claims) MatchesScope(registry.ScopeRequirement, registry.Object) bool { return false }
func (claims) Constraints([]string, registry.Object) string                 { return "" }
func (claims) ChargesUpdates() bool                                         { return true }

// class returns a claim's storage class: the beta annotation's, else the
// spec's.
func (c claims) class(obj registry.Object) string {
	if v, ok := at(obj, "metadata", "annotations")[c.classAnnotation].(string); ok {
		return v
	}
	return str(at(obj, "spec"), "storageClassName")
}

func (c claims) Usage(obj registry.Object, _ time.Time) map[string]string {
	out := List{"persistentvolumeclaims": one, CountName("", "persistentvolumeclaims"): one}
	class := c.class(obj)
	if class != "" {
		out[class+c.classSuffix+"persistentvolumeclaims"] = one
	}
	if storage, ok := claimStorage(obj); ok {
		out["requests.storage"] = storage
		if class != "" {
			out[class+c.classSuffix+"requests.storage"] = storage
		}
	}
	return out.Strings()
}

// claimStorage is the storage a claim is charged: what it requests, or
// what is allocated to it when that is more (an expansion being
// recovered from), rounded up to whole bytes.
func claimStorage(obj registry.Object) (schema.Amount, bool) {
	q, ok := schema.AmountOf(at(obj, "spec", "resources", "requests")["storage"])
	if !ok {
		return schema.Amount{}, false
	}
	if alloc, ok := schema.AmountOf(at(obj, "status", "allocatedResources")["storage"]); ok && alloc.Cmp(q) > 0 {
		q = alloc
	}
	return q.Ceil(), true
}
