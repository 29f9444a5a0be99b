//go:build linux

package server_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestKubectlCoreTypes prints nodes, volumes, claims and component
// statuses with unmodified kubectl.
func TestKubectlCoreTypes(t *testing.T) {
	t.Parallel()
	k := newKubectlEnv(t)
	apply := func(t *testing.T, manifest string) {
		t.Helper()
		f := filepath.Join(t.TempDir(), "m.json")
		if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
			t.Fatal(err)
		}
		k.must(t, "create", "-f", f)
	}

	t.Run("nodes", func(t *testing.T) {
		t.Parallel()
		apply(t, `{"apiVersion":"v1","kind":"Node","metadata":{"name":"kc-node","labels":{"node-role.`+k.brand.LongDomain+`/worker":""}},"spec":{"unschedulable":true},`+
			`"status":{"conditions":[{"type":"Ready","status":"True"}],"nodeInfo":{"kubeletVersion":"v1.32.0"}}}`)
		out := k.must(t, "get", "nodes")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if !regexp.MustCompile(`^NAME +STATUS +ROLES +AGE +VERSION$`).MatchString(lines[0]) {
			t.Errorf("node header %q", lines[0])
		}
		if !regexp.MustCompile(`(?m)^kc-node +Ready,SchedulingDisabled +worker +\S+ +v1\.32\.0$`).MatchString(out) {
			t.Errorf("node row:\n%s", out)
		}
		// Other tests' nodes share the server: only kc-node is asserted.
		if out := k.must(t, "get", "no", "--field-selector", "spec.unschedulable=true", "-o", "name"); !slices.Contains(strings.Fields(out), "node/kc-node") {
			t.Errorf("unschedulable nodes %q", out)
		}
		if out := k.must(t, "uncordon", "kc-node"); !strings.Contains(out, "node/kc-node uncordoned") {
			t.Errorf("uncordon printed %q", out)
		}
		if out := k.must(t, "get", "no", "--field-selector", "spec.unschedulable=true", "-o", "name"); slices.Contains(strings.Fields(out), "node/kc-node") {
			t.Errorf("unschedulable nodes after uncordon %q", out)
		}
		if out := k.must(t, "taint", "node", "kc-node", "dedicated=db:NoSchedule"); !strings.Contains(out, "node/kc-node tainted") {
			t.Errorf("taint printed %q", out)
		}
		_, errOut, err := k.run(t, "taint", "node", "kc-node", "bad=x:Sometimes")
		if err == nil || !strings.Contains(errOut, "Sometimes") {
			t.Errorf("invalid taint accepted: %v %s", err, errOut)
		}
		desc := k.must(t, "describe", "node", "kc-node")
		for _, want := range []string{"Name:               kc-node", "Taints:             dedicated=db:NoSchedule", "Unschedulable:      false"} {
			if !strings.Contains(desc, want) {
				t.Errorf("describe node lacks %q:\n%s", want, desc)
			}
		}
	})

	t.Run("drain", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "namespace", "kc-drain")
		apply(t, `{"apiVersion":"v1","kind":"Node","metadata":{"name":"kc-drain-node"}}`)
		apply(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"victim","namespace":"kc-drain"},"spec":{"nodeName":"kc-drain-node","containers":[{"name":"c","image":"busybox"}]}}`)
		out, errOut, err := k.run(t, "drain", "kc-drain-node", "--grace-period=0", "--timeout=20s", "--force")
		if err != nil {
			t.Fatalf("drain: %v\n%s\n%s", err, out, errOut)
		}
		for _, want := range []string{"node/kc-drain-node cordoned", "evicting pod kc-drain/victim", "node/kc-drain-node drained"} {
			if !strings.Contains(out+errOut, want) {
				t.Errorf("drain output lacks %q:\n%s%s", want, out, errOut)
			}
		}
		if out := k.must(t, "get", "pods", "-n", "kc-drain", "-o", "name"); out != "" {
			t.Errorf("pods left after drain: %q", out)
		}
	})

	t.Run("volumes and claims", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "namespace", "kc-pv")
		apply(t, `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"kc-pv1"},"spec":{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"2Gi"},"hostPath":{"path":"/srv"},"storageClassName":"manual"}}`)
		apply(t, `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"kc-claim","namespace":"kc-pv"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"storageClassName":"manual"}}`)
		out := k.must(t, "get", "pv,pvc", "-n", "kc-pv")
		for _, re := range []string{
			`(?m)^NAME +CAPACITY +ACCESS MODES +RECLAIM POLICY +STATUS +CLAIM +STORAGECLASS +VOLUMEATTRIBUTESCLASS +REASON +AGE$`,
			`(?m)^persistentvolume/kc-pv1 +2Gi +RWO +Retain +Pending +manual +<unset> +\S+$`,
			`(?m)^NAME +STATUS +VOLUME +CAPACITY +ACCESS MODES +STORAGECLASS +VOLUMEATTRIBUTESCLASS +AGE$`,
			`(?m)^persistentvolumeclaim/kc-claim +Pending +manual +<unset> +\S+$`,
		} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("get pv,pvc lacks %s:\n%s", re, out)
			}
		}
		desc := k.must(t, "describe", "pvc", "kc-claim", "-n", "kc-pv")
		for _, want := range []string{"Name:          kc-claim", "StorageClass:  manual", "Status:        Pending", "Finalizers:    [" + k.brand.LongDomain + "/pvc-protection]", "VolumeMode:    Filesystem"} {
			if !strings.Contains(desc, want) {
				t.Errorf("describe pvc lacks %q:\n%s", want, desc)
			}
		}
		// Nothing uses them: the protection finalizers go, and kubectl's
		// wait for the deletion ends.
		if out := k.must(t, "delete", "pvc", "kc-claim", "-n", "kc-pv"); !strings.Contains(out, `persistentvolumeclaim "kc-claim" deleted`) {
			t.Errorf("delete pvc printed %q", out)
		}
		if out := k.must(t, "delete", "pv", "kc-pv1"); !strings.Contains(out, `persistentvolume "kc-pv1" deleted`) {
			t.Errorf("delete pv printed %q", out)
		}
	})

	t.Run("component statuses", func(t *testing.T) {
		t.Parallel()
		out, errOut, err := k.run(t, "get", "cs")
		if err != nil {
			t.Fatalf("get cs: %v\n%s", err, errOut)
		}
		if !strings.Contains(errOut, "Warning: v1 ComponentStatus is deprecated in v1.19+") {
			t.Errorf("get cs warning %q", errOut)
		}
		if !regexp.MustCompile(`^NAME +STATUS +MESSAGE +ERROR\nstorage +Healthy +ok +\n$`).MatchString(out) {
			t.Errorf("get cs:\n%q", out)
		}
	})
}
