package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"platd/security"
	"platd/server/registry"
)

func TestNodeGraphPodRefs(t *testing.T) {
	t.Parallel()
	c := &NodeGraph{}
	pod := `{"spec":{"nodeName":"n1","serviceAccountName":"sa","imagePullSecrets":[{"name":"pull"}],
		"containers":[{"env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"envsecret","key":"k"}}},{"name":"B","valueFrom":{"configMapKeyRef":{"name":"envcm","key":"k"}}},{"name":"C","value":"x"}],
			"envFrom":[{"secretRef":{"name":"fromsecret"}},{"configMapRef":{"name":"fromcm"}}]}],
		"initContainers":[{"env":[{"name":"I","valueFrom":{"secretKeyRef":{"name":"initsecret","key":"k"}}}]}],
		"ephemeralContainers":[{"envFrom":[{"configMapRef":{"name":"debugcm"}}]}],
		"volumes":[{"name":"s","secret":{"secretName":"volsecret"}},{"name":"c","configMap":{"name":"volcm"}},
			{"name":"p","persistentVolumeClaim":{"claimName":"claim"}},{"name":"eph","ephemeral":{"volumeClaimTemplate":{"spec":{}}}},
			{"name":"proj","projected":{"sources":[{"secret":{"name":"projsecret"}},{"configMap":{"name":"projcm"}},{"serviceAccountToken":{"path":"t"}}]}},
			{"name":"az","azureFile":{"secretName":"azsecret","shareName":"x"}},{"name":"csi","csi":{"driver":"d","nodePublishSecretRef":{"name":"csisecret"}}},
			{"name":"rbd","rbd":{"secretRef":{"name":"rbdsecret"}}},{"name":"dup","secret":{"secretName":"pull"}}],
		"resourceClaims":[{"name":"a","resourceClaimName":"direct"},{"name":"b","resourceClaimTemplateName":"tmpl"},{"name":"c","resourceClaimTemplateName":"pending"}]},
		"status":{"resourceClaimStatuses":[{"name":"b","resourceClaimName":"p1-b-xyz"},{"name":"c"}]}}`
	got := c.podRefs("p1", []byte(pod))
	want := &security.NodePodRefs{
		Node:            "n1",
		Secrets:         []string{"pull", "envsecret", "fromsecret", "initsecret", "volsecret", "projsecret", "azsecret", "csisecret", "rbdsecret"},
		ConfigMaps:      []string{"envcm", "fromcm", "debugcm", "volcm", "projcm"},
		PVCs:            []string{"claim", "p1-eph"},
		ServiceAccounts: []string{"sa"},
		ResourceClaims:  []string{"direct", "p1-b-xyz"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("refs\n got %+v\nwant %+v", got, want)
	}
	if r := c.podRefs("p", []byte(`{"spec":{"volumes":[{"name":"s","secret":{"secretName":"x"}}]}}`)); r != nil {
		t.Errorf("unbound pod has refs %+v", r)
	}
}

func TestNodeGraphPVRefs(t *testing.T) {
	t.Parallel()
	c := &NodeGraph{}
	pv := `{"spec":{"claimRef":{"namespace":"ns","name":"claim"},"capacity":{"storage":"1Gi"},
		"csi":{"driver":"d","volumeHandle":"h","nodeStageSecretRef":{"name":"stage","namespace":"csins"},"nodePublishSecretRef":{"name":"pub","namespace":"csins"},
			"nodeExpandSecretRef":{"name":"expand","namespace":"csins"},
			"controllerPublishSecretRef":{"name":"ctrl-publish","namespace":"csins"},"controllerExpandSecretRef":{"name":"ctrl-expand","namespace":"csins"}},
		"rbd":{"secretRef":{"name":"rbd"}},"cephfs":{"secretRef":{"name":"ceph","namespace":"cephns"}},"storageos":{"secretRef":{"name":"sos"}},
		"azureFile":{"secretName":"az","secretNamespace":"azns"}}}`
	got := c.pvRefs([]byte(pv))
	if got.ClaimNamespace != "ns" || got.ClaimName != "claim" {
		t.Errorf("claim %s/%s", got.ClaimNamespace, got.ClaimName)
	}
	type r = security.NodeRef
	// A CSI volume's controller secrets are not the kubelet's to read.
	want := []r{{Namespace: "azns", Name: "az"}, {Namespace: "cephns", Name: "ceph"}, {Namespace: "csins", Name: "expand"}, {Namespace: "csins", Name: "pub"},
		{Namespace: "csins", Name: "stage"}, {Namespace: "default", Name: "sos"}, {Namespace: "ns", Name: "rbd"}}
	slices.SortFunc(got.Secrets, func(a, b security.NodeRef) int {
		if a.Namespace != b.Namespace {
			return strings.Compare(a.Namespace, b.Namespace)
		}
		return strings.Compare(a.Name, b.Name)
	})
	if !reflect.DeepEqual(got.Secrets, want) {
		t.Errorf("secrets %v, want %v", got.Secrets, want)
	}
}

func TestNodeGraphFollowsStore(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.createPodNamespace(t, "ns")
	pods := e.lookup(t, "", "v1", "pods")
	pvs := e.lookup(t, "", "v1", "persistentvolumes")
	vas := e.lookup(t, e.brand.Group("storage"), "v1", "volumeattachments")
	ctx := context.Background()
	create := func(d *registry.Descriptor, js string) {
		t.Helper()
		var obj registry.Object
		if err := json.Unmarshal([]byte(js), &obj); err != nil {
			t.Fatal(err)
		}
		if _, err := e.api.Create(ctx, d, obj); err != nil {
			t.Fatalf("creating %s: %v", js, err)
		}
	}
	podJSON := func(name, node, secret string) string {
		return `{"metadata":{"name":"` + name + `","namespace":"ns"},"spec":{"nodeName":"` + node + `","containers":[{"name":"c","image":"i"}],
			"volumes":[{"name":"v","secret":{"secretName":"` + secret + `"}},{"name":"p","persistentVolumeClaim":{"claimName":"claim-` + name + `"}}]}}`
	}
	create(pods, podJSON("p1", "n1", "s1"))
	create(pods, podJSON("unbound", "", "s0"))
	create(pvs, `{"metadata":{"name":"pv1"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/x"},
		"claimRef":{"namespace":"ns","name":"claim-p2"}}}`)

	g := security.NewNodeGraph()
	c := &NodeGraph{Source: e.store, Graph: g, Pods: pods, PersistentVolumes: pvs, VolumeAttachments: vas, Log: e.log}
	if err := c.Load(); err != nil {
		t.Fatal(err)
	}
	// Loaded before anything runs.
	if !g.HasPath("n1", security.NodeSecret, "ns", "s1") || g.HasPath("n1", security.NodeSecret, "ns", "s0") || g.HasPath("n1", security.NodePV, "", "pv1") {
		t.Fatal("the loaded graph is wrong")
	}
	e.run(t, c.Run)

	// A new pod bound to n1 makes its secret, claim and the claim's volume
	// reachable; deleting it takes them away again.
	create(pods, podJSON("p2", "n1", "s2"))
	waitFor(t, "p2's secret", func() bool { return g.HasPath("n1", security.NodeSecret, "ns", "s2") })
	if !g.HasPath("n1", security.NodePV, "", "pv1") || g.HasPath("n2", security.NodeSecret, "ns", "s2") {
		t.Fatal("p2's volume not reachable, or reachable from another node")
	}
	create(vas, `{"metadata":{"name":"va1"},"spec":{"attacher":"a","nodeName":"n1","source":{"persistentVolumeName":"pv1"}}}`)
	waitFor(t, "va1", func() bool { return g.HasPath("n1", security.NodeVolumeAttachment, "", "va1") })

	zero := int64(0)
	if _, err := e.api.Delete(ctx, pods, "ns", "p2", registry.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "p2 gone", func() bool { return !g.HasPath("n1", security.NodeSecret, "ns", "s2") })
	if g.HasPath("n1", security.NodePV, "", "pv1") || !g.HasPath("n1", security.NodeSecret, "ns", "s1") {
		t.Fatal("deleting p2 changed the wrong relations")
	}
}

func TestUnboundPod(t *testing.T) {
	t.Parallel()
	stored, err := os.ReadFile("testdata/stored-pod.json")
	if err != nil {
		t.Fatal(err)
	}
	bound := bytes.Replace(stored, []byte(`"spec":{`), []byte(`"spec":{"nodeName":"n1",`), 1)
	for _, c := range []struct {
		pod     string
		unbound bool
	}{
		{string(stored), true},
		{string(bound), false},
		{`{}`, true},
		{`{"spec":{}}`, true},
		{`{"spec":{"nodeName":""}}`, true},
		{`{"spec":{"nodeName":null}}`, true},
		{`{"spec":null}`, true},
		{` { "spec" : { "containers" : [ ] , "nodeName" : "n" } } `, false},
		{`{"spec":{"nodeName":"n"},"spec":{"nodeName":""}}`, false},
		{`{"Spec":{"NODENAME":"n"}}`, false},
		{`{"sp\u0065c":{"nodeN\u0061me":"n"}}`, false},
		{`{"metadata":{"nodeName":"n"},"status":{"nodeName":"n"}}`, true},
		{`{"spec":{"containers":[{"nodeName":"n"}]}}`, true},
		{`{"spec":{"nodeName":"\u0000"}}`, false},
		// Unreadable JSON is left to the decoder, which logs it.
		{`{"spec":{}`, false},
		{`[]`, false},
	} {
		if got := unboundPod([]byte(c.pod)); got != c.unbound {
			t.Errorf("unboundPod(%s) = %v, want %v", c.pod, got, c.unbound)
		}
	}
	c := &NodeGraph{}
	if r := c.podRefs("p", bound); r == nil || r.Node != "n1" || !slices.Equal(r.ConfigMaps, []string{"checkout-config-00000"}) || !slices.Equal(r.ServiceAccounts, []string{"checkout"}) {
		t.Errorf("bound stored pod: refs %+v", r)
	}
}

// FuzzUnboundPod holds the scan to the decoder: a pod it calls unbound
// decodes with no nodeName, or not at all.
func FuzzUnboundPod(f *testing.F) {
	f.Add(`{"spec":{"nodeName":"n"}}`)
	f.Add(`{"SPEC":{"nodename":""},"spec":{"nodeName":null}}`)
	f.Add(`{"metadata":{"name":"x"},"spec":{"containers":[{"name":"a"}]}}`)
	f.Fuzz(func(t *testing.T, pod string) {
		if !unboundPod([]byte(pod)) {
			return
		}
		var p graphPod
		if err := json.Unmarshal([]byte(pod), &p); err == nil && p.Spec.NodeName != "" {
			t.Fatalf("%q: called unbound, decodes with nodeName %q", pod, p.Spec.NodeName)
		}
	})
}

// BenchmarkPodRefsUnbound reads the stored benchmark pod, bound to no
// node, as the node authorizer's graph does for every pod event.
func BenchmarkPodRefsUnbound(b *testing.B) {
	value, err := os.ReadFile("testdata/stored-pod.json")
	if err != nil {
		b.Fatal(err)
	}
	c := &NodeGraph{}
	b.ReportAllocs()
	for b.Loop() {
		if r := c.podRefs("p", value); r != nil {
			b.Fatal(r)
		}
	}
}

// TestContainsFoldNodeName holds the word search to a plain one: every
// position, case, and neighbouring byte.
func TestContainsFoldNodeName(t *testing.T) {
	naive := func(b []byte) bool {
		for i := 0; i+8 <= len(b); i++ {
			if bytes.EqualFold(b[i:i+8], []byte("nodename")) {
				return true
			}
		}
		return false
	}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("nNoOdDeEaAmM\"{}:,\x00\xff@`.Kk")
	for n := range 40 {
		for range 300 {
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			if n >= 8 && rng.IntN(2) == 0 {
				at := rng.IntN(n - 7)
				for i, c := range []byte("nodename") {
					if rng.IntN(2) == 0 {
						c -= 'a' - 'A'
					}
					b[at+i] = c
				}
				if rng.IntN(3) == 0 {
					b[at+rng.IntN(8)] ^= 0x01 // a near miss
				}
			}
			if got, want := containsFoldNodeName(b), naive(b); got != want {
				t.Fatalf("%q: found %v, want %v", b, got, want)
			}
		}
	}
}

// FuzzPodRefsPrefilter: the bytes test before the scan changes no
// answer for a pod that decodes.
func FuzzPodRefsPrefilter(f *testing.F) {
	f.Add(`{"spec":{"nodeName":"n"}}`)
	f.Add(`{"spec":{"NodeNAME":"n","volumes":[{"name":"v","secret":{"secretName":"s"}}]}}`)
	f.Add(`{"spec":{"node\u004eame":"n"}}`)
	f.Add(`{"metadata":{"name":"x"},"spec":{"containers":[{"name":"a"}]}}`)
	c := &NodeGraph{Log: slog.New(slog.DiscardHandler)}
	f.Fuzz(func(t *testing.T, pod string) {
		var p graphPod
		if json.Unmarshal([]byte(pod), &p) != nil {
			return
		}
		got := c.podRefs("p", []byte(pod))
		if (got == nil) != (p.Spec.NodeName == "") {
			t.Fatalf("%q: refs %+v, pod bound to %q", pod, got, p.Spec.NodeName)
		}
	})
}
