package builtin

import (
	"context"
	"testing"

	"platd/server/registry"
	"platd/server/schema"
)

// FuzzStorageNodeQuotaPipeline feeds decoded claims, volumes, nodes and
// quotas through every hook a write runs (defaults, create and update
// preparation, schema defaults, validation of the resource and its
// subresources, field selectors) and requires that none panics, whatever
// the shape of the object.
func FuzzStorageNodeQuotaPipeline(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"c"},"spec":{"accessModes":["ReadWriteOncePod","x"],"resources":{"requests":{"storage":"-1"}},
		"dataSource":{"kind":"K"},"dataSourceRef":{"apiGroup":"","kind":"PersistentVolumeClaim","name":"a","namespace":"n"},"selector":{"matchExpressions":[{"key":"k","operator":"In"}]}},
		"status":{"capacity":{"storage":"1"},"allocatedResources":{"cpu":"1"},"allocatedResourceStatuses":{"storage":"x"}}}`))
	f.Add([]byte(`{"metadata":{"name":"v","annotations":{"volume.beta.` + brand.Label("mount-options") + `":"ro"}},"spec":{"capacity":{"storage":"0","cpu":"1"},"hostPath":{"path":"/"},
		"local":{"path":"../x"},"csi":{"driver":"","nodePublishSecretRef":{}},"nodeAffinity":{"required":{"nodeSelectorTerms":[]}},"persistentVolumeReclaimPolicy":"Recycle"}}`))
	f.Add([]byte(`{"metadata":{"name":"n"},"spec":{"podCIDR":"x","podCIDRs":["10.0.0.0/8","::/0","1.2.3.4/40"],"taints":[{"key":"","effect":""},{"key":"","effect":""}]},
		"status":{"capacity":{"pods":"1.5"},"addresses":[{"type":"a","address":"b"},{"type":"a","address":"b"}]}}`))
	f.Add([]byte(`{"metadata":{"name":"q"},"spec":{"hard":{"pods":"1m","x":"1"},"scopes":["BestEffort","NotBestEffort"],
		"scopeSelector":{"matchExpressions":[{"scopeName":"Terminating","operator":"In","values":[]}]}},"status":{"used":{"a/b":"-1"}}}`))
	var targets []*registry.Descriptor
	for _, d := range coreV1(brand) {
		switch d.Kind {
		case "PersistentVolumeClaim", "PersistentVolume", "Node", "ResourceQuota":
			targets = append(targets, d)
		}
	}
	catalog := testCatalog(f, brand)
	schemas := map[*registry.Descriptor]*schema.Schema{}
	for _, d := range targets {
		schemas[d] = catalog.ByGVK(d.Group, d.Version, d.Kind)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range targets {
			runWriteHooks(t, d, schemas[d], data)
		}
	})
}

// TestComponentStatuses checks what the storage probe's answer turns into.
func TestComponentStatuses(t *testing.T) {
	t.Parallel()
	d := componentStatuses()
	ok := d.Computed(context.Background(), func(context.Context) error { return nil })
	if len(ok) != 1 || str(ok[0], "metadata", "name") != "storage" {
		t.Fatalf("statuses %v", ok)
	}
	if c := listAt(ok[0], "conditions")[0].(map[string]any); c["status"] != "True" || c["message"] != "ok" || has(c, "error") {
		t.Errorf("healthy condition %v", c)
	}
	bad := d.Computed(context.Background(), func(context.Context) error { return context.DeadlineExceeded })
	if c := listAt(bad[0], "conditions")[0].(map[string]any); c["status"] != "False" || c["error"] != "context deadline exceeded" || has(c, "message") {
		t.Errorf("unhealthy condition %v", c)
	}
}
