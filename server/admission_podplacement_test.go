package server_test

import (
	"os"
	"path/filepath"
	"testing"

	"platd/config"
)

// writeAdmissionConfig writes an AdmissionConfiguration holding plugins
// (the YAML of its plugins list) and returns its path.
func writeAdmissionConfig(t *testing.T, b config.Brand, plugins string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "admission.yaml")
	body := "apiVersion: " + config.AdmissionConfigAPIVersions(b)[0] + "\nkind: AdmissionConfiguration\nplugins:\n" + plugins
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestPodNodeSelectorAdmission: with the plugin on, a new pod's node
// selector gets its namespace's (annotated, else the configured cluster
// default), and pods contradicting it or leaving the namespace's
// whitelist are refused as upstream refuses them; with it off (the
// default) pods are stored as written.
func TestPodNodeSelectorAdmission(t *testing.T) {
	t.Parallel()
	b, _ := config.LookupBrand("plat")
	file := writeAdmissionConfig(t, b, `- name: PodNodeSelector
  configuration:
    podNodeSelectorPluginConfig:
      clusterDefaultNodeSelector: env=prod
      listed: zone=a,gpu=yes
`)
	for _, on := range []bool{true, false} {
		name := "off"
		if on {
			name = "on"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := start(t, func(o *config.Options) {
				o.AdmissionControlConfigFile = file
				if on {
					o.EnableAdmissionPlugins = []string{config.PluginPodNodeSelector}
				}
			})
			key := "scheduler.alpha." + e.opts.Brand.Label("node-selector")
			for ns, selector := range map[string]string{"zoned": "zone=a", "listed": "zone=a", "broken": "zone"} {
				e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"`+ns+`","annotations":{"`+key+`":"`+selector+`"}}}`).mustCode(t, 201)
			}
			e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"plain"}}`).mustCode(t, 201)
			pod := func(name, selector string) string {
				return `{"metadata":{"name":"` + name + `"},"spec":{"nodeSelector":` + selector + `,"containers":[{"name":"c","image":"x"}]}}`
			}
			for _, c := range []struct {
				ns, pod, selector string
				// code and message answer the create with the plugin on;
				// stored is the stored node selector.
				code    int
				message string
				stored  string
			}{
				{ns: "plain", pod: "p", selector: `{"app":"web"}`, code: 201, stored: `{"app":"web","env":"prod"}`},
				{ns: "zoned", pod: "p", selector: `{"app":"web"}`, code: 201, stored: `{"app":"web","zone":"a"}`},
				{ns: "zoned", pod: "q", selector: `{"zone":"b"}`, code: 403,
					message: `pods "q" is forbidden: pod node label selector conflicts with its namespace node label selector`},
				{ns: "listed", pod: "p", selector: `{"gpu":"yes"}`, code: 201, stored: `{"gpu":"yes","zone":"a"}`},
				{ns: "listed", pod: "q", selector: `{"gpu":"no"}`, code: 403,
					message: `pods "q" is forbidden: pod node label selector labels conflict with its namespace whitelist`},
				{ns: "broken", pod: "p", selector: `{}`, code: 500, message: `invalid selector: [zone]`},
			} {
				r := e.do("POST", "/api/v1/namespaces/"+c.ns+"/pods", pod(c.pod, c.selector))
				if !on {
					r.mustCode(t, 201)
					got := path(e.do("GET", "/api/v1/namespaces/"+c.ns+"/pods/"+c.pod, nil).mustCode(t, 200).obj(t), "spec.nodeSelector")
					if want := c.selector; mustJSON(t, got) != want && !(want == `{}` && got == nil) {
						t.Errorf("%s/%s: stored node selector %s, want it as written %s", c.ns, c.pod, mustJSON(t, got), want)
					}
					continue
				}
				r.mustCode(t, c.code)
				if c.code != 201 {
					r.mustMessage(t, c.message)
					e.do("GET", "/api/v1/namespaces/"+c.ns+"/pods/"+c.pod, nil).mustCode(t, 404)
					continue
				}
				got := path(e.do("GET", "/api/v1/namespaces/"+c.ns+"/pods/"+c.pod, nil).mustCode(t, 200).obj(t), "spec.nodeSelector")
				if mustJSON(t, got) != c.stored {
					t.Errorf("%s/%s: stored node selector %s, want %s", c.ns, c.pod, mustJSON(t, got), c.stored)
				}
			}
			if !on {
				return
			}
			// A refusal of the mutating step names a pod that has only a
			// generateName by its empty name, as upstream's.
			e.do("POST", "/api/v1/namespaces/zoned/pods", `{"metadata":{"generateName":"g-"},"spec":{"nodeSelector":{"zone":"b"},"containers":[{"name":"c","image":"x"}]}}`).
				mustCode(t, 403).mustMessage(t, `pods "" is forbidden: pod node label selector conflicts with its namespace node label selector`)
			// Updates are not admitted: a pod its namespace's new selector
			// contradicts is still updated, and keeps its own.
			merge := []string{"Content-Type", "application/merge-patch+json"}
			e.do("PATCH", "/api/v1/namespaces/plain", `{"metadata":{"annotations":{"`+key+`":"env=dev"}}}`, merge...).mustCode(t, 200)
			p := e.do("PATCH", "/api/v1/namespaces/plain/pods/p", `{"metadata":{"labels":{"a":"b"}}}`, merge...).mustCode(t, 200).obj(t)
			if got := mustJSON(t, path(p, "spec.nodeSelector")); got != `{"app":"web","env":"prod"}` {
				t.Errorf("updated pod's node selector %s", got)
			}
		})
	}
}
