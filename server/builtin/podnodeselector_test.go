package builtin

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
)

// statusText renders an admission error as the client gets it: code,
// reason and message; "" for none.
func statusText(err error) string {
	if err == nil {
		return ""
	}
	s := apierr.FromError(err).Status
	return fmt.Sprintf("%d %s: %s", s.Code, s.Reason, s.Message)
}

func TestPodNodeSelectorAdmission(t *testing.T) {
	t.Parallel()
	core := coreV1(brand)
	key := "scheduler.alpha." + brand.Label("node-selector")
	namespaces := []registry.Object{
		decodeJSON(t, `{"metadata":{"name":"plain"}}`),
		decodeJSON(t, `{"metadata":{"name":"zoned","annotations":{"`+key+`":"zone = a, disk=ssd"}}}`),
		decodeJSON(t, `{"metadata":{"name":"unset","annotations":{"`+key+`":""}}}`),
		decodeJSON(t, `{"metadata":{"name":"listed","annotations":{"`+key+`":"zone=a"}}}`),
		decodeJSON(t, `{"metadata":{"name":"bad","annotations":{"`+key+`":"zone"}}}`),
		decodeJSON(t, `{"metadata":{"name":"badkey","annotations":{"`+key+`":"-zone=a"}}}`),
		decodeJSON(t, `{"metadata":{"name":"badvalue","annotations":{"`+key+`":"zone=a b"}}}`),
	}
	cfg := config.PodNodeSelectorConfiguration{
		config.PodNodeSelectorDefaultKey: "env=prod",
		"listed":                         "zone=a,gpu=yes",
		"badvalue":                       "",
		"plain":                          "env=prod,team=x",
	}
	const conflict = `403 Forbidden: pods "p" is forbidden: pod node label selector conflicts with its namespace node label selector`
	const outside = `403 Forbidden: pods "p" is forbidden: pod node label selector labels conflict with its namespace whitelist`
	tests := []struct {
		name, ns, spec string
		config         config.PodNodeSelectorConfiguration
		// want is the spec after admission; err the client's answer.
		want, err string
	}{
		{"cluster default joins", "plain", `{}`, cfg, `{"nodeSelector":{"env":"prod"}}`, ""},
		{"no configuration, nothing", "plain", `{}`, nil, `{}`, ""},
		{"namespace annotation wins over the default", "zoned", `{"nodeSelector":{"app":"web"}}`, cfg,
			`{"nodeSelector":{"app":"web","disk":"ssd","zone":"a"}}`, ""},
		{"same label agrees", "zoned", `{"nodeSelector":{"zone":"a"}}`, cfg, `{"nodeSelector":{"disk":"ssd","zone":"a"}}`, ""},
		{"empty annotation: no default", "unset", `{"nodeSelector":{"app":"web"}}`, cfg, `{"nodeSelector":{"app":"web"}}`, ""},
		{"conflict", "zoned", `{"nodeSelector":{"zone":"b"}}`, cfg, "", conflict},
		{"conflict with the default", "plain", `{"nodeSelector":{"env":"dev"}}`, cfg, "", conflict},
		{"within the whitelist", "listed", `{"nodeSelector":{"gpu":"yes"}}`, cfg, `{"nodeSelector":{"gpu":"yes","zone":"a"}}`, ""},
		{"outside the whitelist", "listed", `{"nodeSelector":{"gpu":"no"}}`, cfg, "", outside},
		{"default merged, then outside the namespace's whitelist", "plain", `{"nodeSelector":{"app":"web"}}`, cfg, "", outside},
		{"malformed annotation", "bad", `{}`, cfg, "", "500 : invalid selector: [zone]"},
		{"malformed annotation key", "badkey", `{}`, cfg, "", `500 : <nil>: Invalid value: "-zone": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{"malformed annotation value", "badvalue", `{}`, cfg, "", `500 : [zone]: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{"malformed default", "plain", `{}`, config.PodNodeSelectorConfiguration{config.PodNodeSelectorDefaultKey: "a=b=c"}, "", "500 : invalid selector: [a b c]"},
		{"malformed whitelist", "unset", `{}`, config.PodNodeSelectorConfiguration{"unset": "a,"}, "", "500 : invalid selector: [a]"},
		{"missing namespace", "gone", `{}`, cfg, "", "500 InternalError: Internal error occurred: namespace gone does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPodNodeSelector(brand, kindOf(core, "Pod"), kindOf(core, "Namespace"), tt.config)
			l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{p.namespaces: namespaces}}
			pod := registry.Object{"metadata": map[string]any{"name": "p", "namespace": tt.ns}, "spec": decodeJSON(t, tt.spec)}
			err := p.admitPod(context.Background(), l, pod, nil)
			if got := statusText(err); got != tt.err {
				t.Fatalf("error %q\n want %q", got, tt.err)
			}
			if err != nil {
				return
			}
			if got := canonicalJSON(t, pod["spec"]); got != tt.want {
				t.Errorf("spec %s, want %s", got, tt.want)
			}
			// The admitted pod passes the validating step.
			if err := p.validatePod(context.Background(), l, pod, nil); err != nil {
				t.Errorf("validation of the admitted pod: %v", err)
			}
		})
	}
}

func TestPodNodeSelectorValidation(t *testing.T) {
	t.Parallel()
	core := coreV1(brand)
	key := "scheduler.alpha." + brand.Label("node-selector")
	p := newPodNodeSelector(brand, kindOf(core, "Pod"), kindOf(core, "Namespace"), config.PodNodeSelectorConfiguration{"ns": "zone=a,gpu=yes"})
	l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{p.namespaces: {
		decodeJSON(t, `{"metadata":{"name":"ns","annotations":{"`+key+`":"zone=a"}}}`),
	}}}
	for _, tt := range []struct{ name, spec, err string }{
		{"namespace's selector and a whitelisted label", `{"nodeSelector":{"zone":"a","gpu":"yes"}}`, ""},
		// A later mutating step (a webhook) may have changed the selector.
		{"changed after the merge", `{"nodeSelector":{"zone":"b"}}`, `403 Forbidden: pods "p" is forbidden: pod node label selector conflicts with its namespace node label selector`},
		{"label outside the whitelist", `{"nodeSelector":{"zone":"a","disk":"ssd"}}`, `403 Forbidden: pods "p" is forbidden: pod node label selector labels conflict with its namespace whitelist`},
	} {
		pod := registry.Object{"metadata": map[string]any{"name": "p", "namespace": "ns"}, "spec": decodeJSON(t, tt.spec)}
		if got := statusText(p.validatePod(context.Background(), l, pod, nil)); got != tt.err {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.err)
		}
	}
}

// Upstream's plugin admits creates only, and reads nothing on an update.
func TestPodNodeSelectorUpdates(t *testing.T) {
	t.Parallel()
	core := coreV1(brand)
	p := newPodNodeSelector(brand, kindOf(core, "Pod"), kindOf(core, "Namespace"), config.PodNodeSelectorConfiguration{config.PodNodeSelectorDefaultKey: "env=prod"})
	l := fakeLookup{err: errors.New("read")}
	pod := registry.Object{"metadata": map[string]any{"name": "p", "namespace": "ns"}, "spec": decodeJSON(t, `{"nodeSelector":{"env":"dev"}}`)}
	if err := p.admitPod(context.Background(), l, pod, pod); err != nil {
		t.Errorf("admit update: %v", err)
	}
	if err := p.validatePod(context.Background(), l, pod, pod); err != nil {
		t.Errorf("validate update: %v", err)
	}
	if got := canonicalJSON(t, pod["spec"]); got != `{"nodeSelector":{"env":"dev"}}` {
		t.Errorf("update changed the spec: %s", got)
	}
	// A namespace read that fails otherwise is an internal error.
	if got := statusText(p.admitPod(context.Background(), l, pod, nil)); got != "500 InternalError: Internal error occurred: read" {
		t.Errorf("failed read: %q", got)
	}
}
