package server_test

import (
	"fmt"
	"regexp"
	"testing"

	"platd/config"
)

// TestServiceAccountAdmission: a new pod runs as its service account,
// which must exist, and its containers get the account's token volume
// unless automounting is off, as upstream's ServiceAccount admission.
func TestServiceAccountAdmission(t *testing.T) {
	t.Parallel()
	b := config.Brands["kubernetes"]
	e := start(t, withBrand(b.Name), withControllers("*", "-"+config.ControllerRootCA))
	mountPath := b.ServiceAccountMountPath()
	volumeName := regexp.MustCompile(`^` + regexp.QuoteMeta(b.APIAccessVolume) + `-[bcdfghjklmnpqrstvwxz2456789]{5}$`)

	// A namespace and a pod in it, back to back: the pod waits for the
	// namespace's default account rather than being refused.
	for i := range 3 {
		ns := fmt.Sprintf("fresh-%d", i)
		e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"`+ns+`"}}`).mustCode(t, 201)
		p := e.do("POST", "/api/v1/namespaces/"+ns+"/pods",
			`{"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i","image":"x"}],"containers":[{"name":"c","image":"x"}]}}`).mustCode(t, 201).obj(t)
		if got := path(p, "spec.serviceAccountName"); got != "default" {
			t.Errorf("%s: serviceAccountName %v", ns, got)
		}
		vols, _ := path(p, "spec.volumes").([]any)
		if len(vols) != 1 {
			t.Fatalf("%s: volumes %v", ns, vols)
		}
		v := vols[0].(map[string]any)
		name, _ := v["name"].(string)
		if !volumeName.MatchString(name) {
			t.Errorf("%s: volume name %q", ns, name)
		}
		wantVolume := `{"name":"` + name + `","projected":{"defaultMode":420,"sources":[` +
			`{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},` +
			`{"configMap":{"items":[{"key":"ca.crt","path":"ca.crt"}],"name":"` + b.RootCAConfigMap + `"}},` +
			`{"downwardAPI":{"items":[{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"},"path":"namespace"}]}}]}}`
		if got := mustJSON(t, v); got != wantVolume {
			t.Errorf("%s: volume\n got  %s\n want %s", ns, got, wantVolume)
		}
		wantMount := `[{"mountPath":"` + mountPath + `","name":"` + name + `","readOnly":true}]`
		for _, c := range []string{"spec.initContainers", "spec.containers"} {
			ctr := path(p, c).([]any)[0].(map[string]any)
			if got := mustJSON(t, ctr["volumeMounts"]); got != wantMount {
				t.Errorf("%s: %s mounts %s", ns, c, got)
			}
		}
	}

	// Automounting turned off by the pod, or by its account.
	e.do("POST", "/api/v1/namespaces/fresh-0/serviceaccounts",
		`{"metadata":{"name":"quiet"},"automountServiceAccountToken":false,"imagePullSecrets":[{"name":"reg"}]}`).mustCode(t, 201)
	for _, spec := range []string{
		`{"automountServiceAccountToken":false,"containers":[{"name":"c","image":"x"}]}`,
		`{"serviceAccountName":"quiet","containers":[{"name":"c","image":"x"}]}`,
	} {
		p := e.do("POST", "/api/v1/namespaces/fresh-0/pods", `{"metadata":{"generateName":"off-"},"spec":`+spec+`}`).mustCode(t, 201).obj(t)
		if v, m := path(p, "spec.volumes"), path(p, "spec.containers").([]any)[0].(map[string]any)["volumeMounts"]; v != nil || m != nil {
			t.Errorf("automount off: volumes %v, mounts %v", v, m)
		}
	}
	p := e.do("GET", "/api/v1/namespaces/fresh-0/pods", nil).mustCode(t, 200).obj(t)
	for _, item := range p["items"].([]any) {
		if got := mustJSON(t, path(item.(map[string]any), "spec.imagePullSecrets")); path(item.(map[string]any), "spec.serviceAccountName") == "quiet" && got != `[{"name":"reg"}]` {
			t.Errorf("pull secrets of the account's pod: %s", got)
		}
	}

	// A missing account refuses the pod, a dry run as well, and stores
	// nothing.
	for _, q := range []string{"", "?dryRun=All"} {
		e.do("POST", "/api/v1/namespaces/fresh-0/pods"+q, `{"metadata":{"name":"lost"},"spec":{"serviceAccountName":"nope","containers":[{"name":"c","image":"x"}]}}`).
			mustCode(t, 403).mustMessage(t, `pods "lost" is forbidden: error looking up service account fresh-0/nope: serviceaccount "nope" not found`)
	}
	e.do("GET", "/api/v1/namespaces/fresh-0/pods/lost", nil).mustCode(t, 404)
}
