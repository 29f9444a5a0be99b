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
	forPluginOnAndOff(t, file, config.PluginPodNodeSelector, func(t *testing.T, e *env, on bool) {
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

// TestPodTolerationRestrictionAdmission: with the plugin on, a new pod's
// tolerations get its namespace's defaults (annotated, else configured)
// and, unless it is BestEffort, the memory-pressure toleration, and pods
// leaving the namespace's whitelist are refused with upstream's 500;
// with it off (the default) pods keep the tolerations they are written
// with and DefaultTolerationSeconds'.
func TestPodTolerationRestrictionAdmission(t *testing.T) {
	t.Parallel()
	b, _ := config.LookupBrand("plat")
	file := writeAdmissionConfig(t, b, `- name: PodTolerationRestriction
  configuration:
    apiVersion: `+config.PodTolerationRestrictionConfigAPIVersions(b)[0]+`
    kind: Configuration
    default:
    - {key: dedicated, operator: Equal, value: shared, effect: NoSchedule}
`)
	notReady := `{"effect":"NoExecute","key":"node.` + b.Label("not-ready") + `","operator":"Exists","tolerationSeconds":300}`
	unreachable := `{"effect":"NoExecute","key":"node.` + b.Label("unreachable") + `","operator":"Exists","tolerationSeconds":300}`
	memory := `{"effect":"NoSchedule","key":"node.` + b.Label("memory-pressure") + `","operator":"Exists"}`
	dedicated := `{"effect":"NoSchedule","key":"dedicated","operator":"Equal","value":"shared"}`
	team := `{"effect":"NoSchedule","key":"team","operator":"Exists"}`
	const refused = "pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist"
	forPluginOnAndOff(t, file, config.PluginPodTolerationRestriction, func(t *testing.T, e *env, on bool) {
		annotations := map[string]any{
			"scheduler.alpha." + b.Label("defaultTolerations"): `[` + team + `]`,
			// Whitelisted: the team's nodes and every NoExecute taint
			// (DefaultTolerationSeconds' tolerations).
			"scheduler.alpha." + b.Label("tolerationsWhitelist"): `[{"key":"team","operator":"Exists"},{"operator":"Exists","effect":"NoExecute"}]`,
		}
		e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "team", "annotations": annotations}}).mustCode(t, 201)
		e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"plain"}}`).mustCode(t, 201)
		const burstable = `"resources":{"requests":{"cpu":"100m"}}`
		for _, c := range []struct {
			ns, pod, container, tolerations string
			// code and body answer the create with the plugin on: the
			// stored tolerations, or the refusal's message.
			code int
			want string
		}{
			{ns: "plain", pod: "besteffort", code: 201, want: `[` + notReady + `,` + unreachable + `,` + dedicated + `]`},
			{ns: "plain", pod: "burstable", container: burstable, code: 201,
				want: `[` + notReady + `,` + unreachable + `,` + dedicated + `,` + memory + `]`},
			{ns: "team", pod: "besteffort", code: 201, want: `[` + notReady + `,` + unreachable + `,` + team + `]`},
			{ns: "team", pod: "own", tolerations: `[{"key":"team","operator":"Equal","value":"a"}]`, code: 201,
				want: `[{"key":"team","operator":"Equal","value":"a"},` + notReady + `,` + unreachable + `,` + team + `]`},
			{ns: "team", pod: "other", tolerations: `[{"key":"other","operator":"Exists"}]`, code: 500, want: refused},
			{ns: "team", pod: "burstable", container: burstable, code: 500, want: refused},
		} {
			container := `{"name":"c","image":"x"`
			if c.container != "" {
				container += "," + c.container
			}
			spec := `"containers":[` + container + `}]`
			if c.tolerations != "" {
				spec += `,"tolerations":` + c.tolerations
			}
			r := e.do("POST", "/api/v1/namespaces/"+c.ns+"/pods", `{"metadata":{"name":"`+c.pod+`"},"spec":{`+spec+`}}`)
			code := c.code
			if !on {
				code = 201
			}
			r.mustCode(t, code)
			if code != 201 {
				r.mustMessage(t, c.want)
				if reason := r.obj(t)["reason"]; reason != nil {
					t.Errorf("%s/%s: reason %v, want none", c.ns, c.pod, reason)
				}
				e.do("GET", "/api/v1/namespaces/"+c.ns+"/pods/"+c.pod, nil).mustCode(t, 404)
				continue
			}
			want := c.want
			if !on {
				// Only DefaultTolerationSeconds' join the pod's own.
				want = `[` + notReady + `,` + unreachable + `]`
				if c.tolerations != "" {
					want = c.tolerations[:len(c.tolerations)-1] + `,` + want[1:]
				}
			}
			got := path(e.do("GET", "/api/v1/namespaces/"+c.ns+"/pods/"+c.pod, nil).mustCode(t, 200).obj(t), "spec.tolerations")
			if mustJSON(t, got) != want {
				t.Errorf("%s/%s: stored tolerations\n got  %s\n want %s", c.ns, c.pod, mustJSON(t, got), want)
			}
		}
	})
}

// forPluginOnAndOff runs test, in parallel, against a server reading the
// admission configuration file with plugin enabled and against one with
// it off (the default), saying which.
func forPluginOnAndOff(t *testing.T, file, plugin string, test func(t *testing.T, e *env, on bool)) {
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
					o.EnableAdmissionPlugins = []string{plugin}
				}
			})
			test(t, e, on)
		})
	}
}
