package builtin

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"platd/config"
	"platd/server/registry"
)

// countingLookup counts the reads of a lookup.
type countingLookup struct {
	registry.Lookup
	gets *int
}

func (c countingLookup) Get(d *registry.Descriptor, ns, name string) (registry.Object, error) {
	*c.gets++
	return c.Lookup.Get(d, ns, name)
}

func TestServiceAccountAdmission(t *testing.T) {
	t.Parallel()
	for _, bname := range config.BrandNames() {
		b := config.Brands[bname]
		sa := newServiceAccountAdmission(b, descriptor(t, b, "ServiceAccount"))
		sa.retryInterval = func() time.Duration { return 0 }
		path := b.ServiceAccountMountPath()
		mount := `{"name":"VOL","readOnly":true,"mountPath":"` + path + `"}`
		volume := `{"name":"VOL","projected":{"defaultMode":420,"sources":[
			{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},
			{"configMap":{"name":"` + b.RootCAConfigMap + `","items":[{"key":"ca.crt","path":"ca.crt"}]}},
			{"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}]}}`
		enforce := `"metadata":{"name":"locked","annotations":{"` + b.Label("enforce-mountable-secrets") + `":"true"}}`
		accounts := []string{
			`{"metadata":{"name":"default"},"imagePullSecrets":[{"name":"pull"}]}`,
			`{"metadata":{"name":"off"},"automountServiceAccountToken":false}`,
			`{` + enforce + `,"secrets":[{"name":"ok"}],"imagePullSecrets":[{"name":"okpull"}]}`,
		}
		mirror := `"annotations":{"` + b.Label("config.mirror") + `":"x"}`
		tests := []struct {
			name, meta, spec string
			// want is the spec after admission, the token volume named VOL.
			want, err string
			// gets is how many reads of the account were made.
			gets int
		}{
			{"default account, every container mounts", ``,
				`{"initContainers":[{"name":"i"}],"containers":[{"name":"a"},{"name":"b","volumeMounts":[{"name":"m","mountPath":"/m"}]}]}`,
				`{"serviceAccountName":"default","serviceAccount":"default","imagePullSecrets":[{"name":"pull"}],
				"initContainers":[{"name":"i","volumeMounts":[` + mount + `]}],
				"containers":[{"name":"a","volumeMounts":[` + mount + `]},{"name":"b","volumeMounts":[{"name":"m","mountPath":"/m"},` + mount + `]}],
				"volumes":[` + volume + `]}`, "", 1},
			{"a container that mounts the path keeps its mount", ``,
				`{"imagePullSecrets":[{"name":"mine"}],"containers":[{"name":"a","volumeMounts":[{"name":"own","mountPath":"` + path + `"}]},{"name":"b"}],"volumes":[{"name":"own","emptyDir":{}}]}`,
				`{"serviceAccountName":"default","serviceAccount":"default","imagePullSecrets":[{"name":"mine"}],
				"containers":[{"name":"a","volumeMounts":[{"name":"own","mountPath":"` + path + `"}]},{"name":"b","volumeMounts":[` + mount + `]}],
				"volumes":[{"name":"own","emptyDir":{}},` + volume + `]}`, "", 1},
			{"a token volume the pod has is the one mounted", ``,
				`{"volumes":[{"name":"` + b.APIAccessVolume + `-mine","emptyDir":{}}],"containers":[{"name":"a"}]}`,
				`{"serviceAccountName":"default","serviceAccount":"default","imagePullSecrets":[{"name":"pull"}],
				"containers":[{"name":"a","volumeMounts":[{"name":"` + b.APIAccessVolume + `-mine","readOnly":true,"mountPath":"` + path + `"}]}],
				"volumes":[{"name":"` + b.APIAccessVolume + `-mine","emptyDir":{}}]}`, "", 1},
			{"no volume when every container mounts the path", ``,
				`{"containers":[{"name":"a","volumeMounts":[{"name":"own","mountPath":"` + path + `"}]}]}`,
				`{"serviceAccountName":"default","serviceAccount":"default","imagePullSecrets":[{"name":"pull"}],
				"containers":[{"name":"a","volumeMounts":[{"name":"own","mountPath":"` + path + `"}]}]}`, "", 1},
			{"pod turns automount off", ``, `{"automountServiceAccountToken":false,"containers":[{"name":"a"}]}`,
				`{"serviceAccountName":"default","serviceAccount":"default","imagePullSecrets":[{"name":"pull"}],"automountServiceAccountToken":false,"containers":[{"name":"a"}]}`, "", 1},
			{"account turns automount off", ``, `{"serviceAccountName":"off","containers":[{"name":"a"}]}`,
				`{"serviceAccountName":"off","serviceAccount":"off","containers":[{"name":"a"}]}`, "", 1},
			{"pod's automount wins over the account's", ``, `{"serviceAccountName":"off","automountServiceAccountToken":true,"containers":[{"name":"a"}]}`,
				`{"serviceAccountName":"off","serviceAccount":"off","automountServiceAccountToken":true,"containers":[{"name":"a","volumeMounts":[` + mount + `]}],"volumes":[` + volume + `]}`, "", 1},
			{"deprecated serviceAccount names the account", ``, `{"serviceAccount":"off","containers":[{"name":"a"}]}`,
				`{"serviceAccountName":"off","serviceAccount":"off","containers":[{"name":"a"}]}`, "", 1},
			{"missing account is looked up once", ``, `{"serviceAccountName":"gone","containers":[{"name":"a"}]}`, "",
				`denied: error looking up service account ns/gone: serviceaccount "gone" not found`, 1},
			{"mountable secrets enforced: allowed", ``,
				`{"serviceAccountName":"locked","automountServiceAccountToken":false,"volumes":[{"name":"s","secret":{"secretName":"ok"}}],"containers":[{"name":"a","envFrom":[{"secretRef":{"name":"ok"}}]}]}`,
				`{"serviceAccountName":"locked","serviceAccount":"locked","automountServiceAccountToken":false,"imagePullSecrets":[{"name":"okpull"}],"volumes":[{"name":"s","secret":{"secretName":"ok"}}],"containers":[{"name":"a","envFrom":[{"secretRef":{"name":"ok"}}]}]}`, "", 1},
			{"mountable secrets enforced: volume", ``,
				`{"serviceAccountName":"locked","volumes":[{"name":"s","secret":{"secretName":"other"}}],"containers":[{"name":"a"}]}`, "",
				`denied: volume with secret.secretName="other" is not allowed because service account locked does not reference that secret`, 1},
			{"mountable secrets enforced: init container env", ``,
				`{"serviceAccountName":"locked","initContainers":[{"name":"i","env":[{"name":"E","valueFrom":{"secretKeyRef":{"name":"other","key":"k"}}}]}],"containers":[{"name":"a"}]}`, "",
				`denied: init container i with envVar E referencing secret.secretName="other" is not allowed because service account locked does not reference that secret`, 1},
			{"mountable secrets enforced: envFrom", ``,
				`{"serviceAccountName":"locked","containers":[{"name":"a","envFrom":[{"secretRef":{"name":"other"}}]}]}`, "",
				`denied: container a with envFrom referencing secret.secretName="other" is not allowed because service account locked does not reference that secret`, 1},
			{"mountable secrets enforced: pull secret", ``,
				`{"serviceAccountName":"locked","imagePullSecrets":[{"name":"okpull"},{"name":"other"}],"containers":[{"name":"a"}]}`, "",
				`denied: imagePullSecrets[1].name="other" is not allowed because service account locked does not reference that imagePullSecret`, 1},
			{"mirror pod is left as it is", mirror, `{"containers":[{"name":"a"}]}`, `{"containers":[{"name":"a"}]}`, "", 0},
			{"mirror pod naming an account", mirror, `{"serviceAccountName":"default","containers":[{"name":"a"}]}`, "",
				"denied: a mirror pod may not reference service accounts", 0},
			{"mirror pod with a secret env", mirror, `{"containers":[{"name":"a","env":[{"name":"E","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}]}]}`, "",
				"denied: a mirror pod may not reference secrets", 0},
			{"mirror pod with a csi secret", mirror, `{"volumes":[{"name":"v","csi":{"driver":"d","nodePublishSecretRef":{"name":"s"}}}],"containers":[{"name":"a"}]}`, "",
				"denied: a mirror pod may not reference secrets", 0},
			{"mirror pod projecting a token", mirror, `{"volumes":[{"name":"v","projected":{"sources":[{"serviceAccountToken":{"path":"t"}}]}}],"containers":[{"name":"a"}]}`, "",
				"denied: a mirror pod may not use ServiceAccountToken volume projections", 0},
		}
		name := regexp.MustCompile(regexp.QuoteMeta(b.APIAccessVolume) + `-[bcdfghjklmnpqrstvwxz2456789]{5}\b`)
		for _, tt := range tests {
			t.Run(bname+"/"+tt.name, func(t *testing.T) {
				var objs []registry.Object
				for _, a := range accounts {
					objs = append(objs, decodeJSON(t, a))
				}
				gets := 0
				l := countingLookup{fakeLookup{objs: map[*registry.Descriptor][]registry.Object{sa.accounts: objs}}, &gets}
				pod := decodeJSON(t, `{"metadata":{"name":"p","namespace":"ns"`+map[bool]string{true: ",", false: ""}[tt.meta != ""]+tt.meta+`},"spec":`+tt.spec+`}`)
				err := admissionError(sa.admitPod(context.Background(), l, pod, nil))
				if err != tt.err {
					t.Fatalf("error %q, want %q", err, tt.err)
				}
				if gets != tt.gets {
					t.Errorf("%d reads of the account, want %d", gets, tt.gets)
				}
				if tt.err != "" {
					return
				}
				got := canonicalJSON(t, pod["spec"])
				if names := name.FindAllString(got, -1); len(names) > 0 {
					got = strings.ReplaceAll(got, names[0], "VOL")
				}
				if want := canonicalJSON(t, decodeJSON(t, tt.want)); got != want {
					t.Errorf("spec:\n got  %s\n want %s", got, want)
				}
			})
		}
	}
}

// TestServiceAccountAdmissionWaitsForDefault: the default account, which
// its controller creates just after the namespace, is looked up again a
// bounded number of times; the wait ends with the request's context.
func TestServiceAccountAdmissionWaitsForDefault(t *testing.T) {
	t.Parallel()
	sa := newServiceAccountAdmission(brand, descriptor(t, brand, "ServiceAccount"))
	sa.retryInterval = func() time.Duration { return 0 }
	pod := func() registry.Object {
		return decodeJSON(t, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"a"}]}}`)
	}
	gets := 0
	l := countingLookup{fakeLookup{}, &gets}
	want := `denied: error looking up service account ns/default: serviceaccount "default" not found`
	if err := admissionError(sa.admitPod(context.Background(), l, pod(), nil)); err != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	if gets != defaultAccountAttempts {
		t.Errorf("%d reads, want %d", gets, defaultAccountAttempts)
	}

	// The account appears while the create waits.
	appearing := &appearingLookup{after: 3, d: sa.accounts}
	p := pod()
	if err := sa.admitPod(context.Background(), appearing, p, nil); err != nil {
		t.Fatal(err)
	}
	if got := len(listOf(mapOf(p["spec"])["volumes"])); got != 1 {
		t.Errorf("%d volumes, want the token volume", got)
	}

	sa.retryInterval = func() time.Duration { return time.Hour }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sa.admitPod(ctx, fakeLookup{}, pod(), nil); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("error %v, want the context's", err)
	}
}

// appearingLookup finds the default account from its after-th read on.
type appearingLookup struct {
	fakeLookup
	after, gets int
	d           *registry.Descriptor
}

func (a *appearingLookup) Get(d *registry.Descriptor, ns, name string) (registry.Object, error) {
	a.gets++
	if a.gets >= a.after {
		return registry.Object{"metadata": map[string]any{"name": name, "namespace": ns}}, nil
	}
	return a.fakeLookup.Get(d, ns, name)
}

func TestServiceAccountAdmissionLeavesUpdates(t *testing.T) {
	t.Parallel()
	sa := newServiceAccountAdmission(brand, descriptor(t, brand, "ServiceAccount"))
	pod := decodeJSON(t, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"a"}]}}`)
	old := copyObj(pod)
	if err := sa.admitPod(context.Background(), fakeLookup{}, pod, old); err != nil {
		t.Fatal(err)
	}
	if got, want := canonicalJSON(t, pod), canonicalJSON(t, old); got != want {
		t.Errorf("update changed the pod: %s", got)
	}
}

// TestServiceAccountAdmissionVolumesAreOwned: every pod gets a token
// volume and mounts of its own, so that what later admission or defaults
// change in one pod's volume (every map and list of it) is not seen in
// the next pod's.
func TestServiceAccountAdmissionVolumesAreOwned(t *testing.T) {
	t.Parallel()
	sa := newServiceAccountAdmission(brand, descriptor(t, brand, "ServiceAccount"))
	l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{sa.accounts: {decodeJSON(t, `{"metadata":{"name":"default"}}`)}}}
	admit := func() registry.Object {
		t.Helper()
		pod := decodeJSON(t, `{"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"a"},{"name":"b"}]}}`)
		if err := sa.admitPod(context.Background(), l, pod, nil); err != nil {
			t.Fatal(err)
		}
		return pod
	}
	first := admit()
	want := canonicalJSON(t, admit()["spec"].(map[string]any)["volumes"])
	// Write into every map and list of the first pod's volume and mounts.
	var scribble func(v any)
	scribble = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				scribble(e)
			}
			x["scribbled"] = true
		case []any:
			for i, e := range x {
				scribble(e)
				x[i] = e
			}
			if len(x) > 0 {
				x[0] = "scribbled"
			}
		}
	}
	spec := first["spec"].(map[string]any)
	scribble(spec["volumes"])
	for _, c := range mapsOf(spec["containers"]) {
		scribble(c["volumeMounts"])
	}
	next := admit()["spec"].(map[string]any)
	got := canonicalJSON(t, next["volumes"])
	// The generated volume names differ; compare apart from them.
	volName := regexp.MustCompile(regexp.QuoteMeta(brand.APIAccessVolume) + `-[a-z0-9]{5}`)
	if volName.ReplaceAllString(got, "VOL") != volName.ReplaceAllString(want, "VOL") {
		t.Errorf("a pod's token volume changed with another pod's:\n got  %s\n want %s", got, want)
	}
	for _, c := range mapsOf(next["containers"]) {
		if got := canonicalJSON(t, c["volumeMounts"]); strings.Contains(got, "scribbled") {
			t.Errorf("container %s's mounts changed with another pod's: %s", c["name"], got)
		}
	}
}
