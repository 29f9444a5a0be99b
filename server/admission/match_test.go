package admission

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

var (
	deployments = &registry.Descriptor{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	namespaces  = &registry.Descriptor{Version: "v1", Resource: "namespaces", Kind: "Namespace", IsNamespace: true}
	nodes       = &registry.Descriptor{Version: "v1", Resource: "nodes", Kind: "Node"}
)

func obj(labels map[string]any) registry.Object {
	return registry.Object{"metadata": map[string]any{"name": "x", "labels": labels}}
}

func TestMatchResources(t *testing.T) {
	t.Parallel()
	rules := func(r ...map[string]any) []any {
		out := make([]any, len(r))
		for i, x := range r {
			out[i] = x
		}
		return out
	}
	rule := func(ops, groups, versions, resources []any, extra ...any) map[string]any {
		m := map[string]any{"operations": ops, "apiGroups": groups, "apiVersions": versions, "resources": resources}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	all := []any{"*"}
	create := []any{"CREATE"}
	nsLabels := func(name string) (map[string]string, error) {
		switch name {
		case "prod":
			return map[string]string{"env": "prod"}, nil
		case "dev":
			return map[string]string{"env": "dev"}, nil
		}
		return nil, errors.New(`namespaces "` + name + `" not found`)
	}
	deploy := &Attributes{Descriptor: deployments, Operation: OpCreate, Namespace: "prod", Name: "web", Object: obj(map[string]any{"app": "web"})}
	status := &Attributes{Descriptor: deployments, Subresource: "status", Operation: OpUpdate, Namespace: "prod", Name: "web", Object: obj(nil), OldObject: obj(nil)}
	node := &Attributes{Descriptor: nodes, Operation: OpDelete, Name: "n1", OldObject: obj(nil)}
	ns := &Attributes{Descriptor: namespaces, Operation: OpCreate, Name: "new", Object: obj(map[string]any{"env": "prod"})}
	tests := []struct {
		name string
		mr   map[string]any
		a    *Attributes
		want bool
		err  string
	}{
		{"exact rule", map[string]any{"resourceRules": rules(rule(create, []any{"apps"}, []any{"v1"}, []any{"deployments"}))}, deploy, true, ""},
		{"other operation", map[string]any{"resourceRules": rules(rule([]any{"UPDATE"}, all, all, all))}, deploy, false, ""},
		{"other group", map[string]any{"resourceRules": rules(rule(all, []any{""}, all, all))}, deploy, false, ""},
		{"other version", map[string]any{"resourceRules": rules(rule(all, all, []any{"v2"}, all))}, deploy, false, ""},
		{"star is main resources only", map[string]any{"resourceRules": rules(rule(all, all, all, all))}, status, false, ""},
		{"subresource", map[string]any{"resourceRules": rules(rule(all, all, all, []any{"deployments/status"}))}, status, true, ""},
		{"any subresource", map[string]any{"resourceRules": rules(rule(all, all, all, []any{"*/*"}))}, status, true, ""},
		{"resource names", map[string]any{"resourceRules": rules(rule(all, all, all, all, "resourceNames", []any{"db"}))}, deploy, false, ""},
		{"resource name", map[string]any{"resourceRules": rules(rule(all, all, all, all, "resourceNames", []any{"db", "web"}))}, deploy, true, ""},
		{"excluded", map[string]any{"resourceRules": rules(rule(all, all, all, all)), "excludeResourceRules": rules(rule(all, []any{"apps"}, all, []any{"deployments"}))}, deploy, false, ""},
		{"namespaced scope", map[string]any{"resourceRules": rules(rule(all, all, all, all, "scope", "Namespaced"))}, deploy, true, ""},
		{"namespaced scope, node", map[string]any{"resourceRules": rules(rule(all, all, all, all, "scope", "Namespaced"))}, node, false, ""},
		{"cluster scope, namespace", map[string]any{"resourceRules": rules(rule(all, all, all, all, "scope", "Cluster"))}, ns, true, ""},
		{"cluster scope, deployment", map[string]any{"resourceRules": rules(rule(all, all, all, all, "scope", "Cluster"))}, deploy, false, ""},
		{"namespace selector", map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"env": "prod"}}, "resourceRules": rules(rule(all, all, all, all))}, deploy, true, ""},
		{"namespace selector, other", map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"env": "dev"}}, "resourceRules": rules(rule(all, all, all, all))}, deploy, false, ""},
		{"namespace selector, cluster-scoped", map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"env": "dev"}}, "resourceRules": rules(rule(all, all, all, all))}, node, true, ""},
		{"namespace selector, new namespace's labels", map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"env": "prod"}}, "resourceRules": rules(rule(all, all, all, all))}, ns, true, ""},
		{"namespace selector, missing namespace", map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"env": "prod"}}, "resourceRules": rules(rule(all, all, all, all))},
			&Attributes{Descriptor: deployments, Operation: OpCreate, Namespace: "gone", Name: "web"}, false, `namespaces "gone" not found`},
		{"object selector", map[string]any{"objectSelector": map[string]any{"matchLabels": map[string]any{"app": "web"}}, "resourceRules": rules(rule(all, all, all, all))}, deploy, true, ""},
		{"object selector, old object", map[string]any{"objectSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": "app", "operator": "DoesNotExist"}}}, "resourceRules": rules(rule(all, all, all, all))}, node, true, ""},
		{"object selector, no match", map[string]any{"objectSelector": map[string]any{"matchLabels": map[string]any{"app": "db"}}, "resourceRules": rules(rule(all, all, all, all))}, deploy, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			matched, err := parseMatchResources(tt.mr).matches(tt.a, nsLabels, nil)
			got := matched != nil
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("matches %v, want %v", got, tt.want)
			}
		})
	}
}

// TestMatchEquivalent checks matchPolicy Equivalent: a request for one
// version matches rules naming another version of the same stored
// resource, as that version, and its objects are converted to it.
func TestMatchEquivalent(t *testing.T) {
	t.Parallel()
	v2 := &registry.Descriptor{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", Namespaced: true}
	v1 := &registry.Descriptor{Group: "autoscaling", Version: "v1", Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", Namespaced: true,
		Storage: &registry.Storage{Descriptor: v2,
			ToStorage: func(o registry.Object) registry.Object {
				o["spec"] = map[string]any{"metrics": []any{o["spec"].(map[string]any)["targetCPUUtilizationPercentage"]}}
				return o
			},
			FromStorage: func(o registry.Object) registry.Object { return o }}}
	equiv := func(d *registry.Descriptor) []*registry.Descriptor {
		if d == v1 {
			return []*registry.Descriptor{v2}
		}
		return []*registry.Descriptor{v1}
	}
	rules := func(policy string) map[string]any {
		return map[string]any{"matchPolicy": policy, "resourceRules": []any{map[string]any{"operations": []any{"*"}, "apiGroups": []any{"autoscaling"},
			"apiVersions": []any{"v2"}, "resources": []any{"horizontalpodautoscalers"}}}}
	}
	a := &Attributes{Descriptor: v1, Operation: OpCreate, Namespace: "ns", Name: "h",
		Object: registry.Object{"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "spec": map[string]any{"targetCPUUtilizationPercentage": int64(50)}}}
	none := func(string) (map[string]string, error) { return nil, nil }
	if got, err := parseMatchResources(rules("Exact")).matches(a, none, equiv); got != nil || err != nil {
		t.Errorf("Exact: matched %v, %v", got, err)
	}
	got, err := parseMatchResources(rules("Equivalent")).matches(a, none, equiv)
	if got != v2 || err != nil {
		t.Fatalf("Equivalent: matched %v, %v", got, err)
	}
	va, err := a.as(context.Background(), got)
	if err != nil {
		t.Fatal(err)
	}
	want := registry.Object{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "spec": map[string]any{"metrics": []any{int64(50)}}}
	if !reflect.DeepEqual(va.Object, want) || va.OldObject != nil {
		t.Errorf("converted %v, want %v", va.Object, want)
	}
	if a.Object["apiVersion"] != "autoscaling/v1" {
		t.Error("the request's object was changed")
	}
	r := va.request("meta")
	if !reflect.DeepEqual(r["kind"], map[string]any{"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"}) ||
		!reflect.DeepEqual(r["requestKind"], map[string]any{"group": "autoscaling", "version": "v1", "kind": "HorizontalPodAutoscaler"}) ||
		!reflect.DeepEqual(r["requestResource"], map[string]any{"group": "autoscaling", "version": "v1", "resource": "horizontalpodautoscalers"}) {
		t.Errorf("request %v", r)
	}
}

// TestMatchEquivalentOtherGroup checks that an equivalent resource of the
// same version in another group (core and events-group events share
// their stored form) matches under Equivalent, both ways.
func TestMatchEquivalentOtherGroup(t *testing.T) {
	t.Parallel()
	core := &registry.Descriptor{Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
	grouped := &registry.Descriptor{Group: "events.example", Version: "v1", Resource: "events", Kind: "Event", Namespaced: true,
		Storage: &registry.Storage{Descriptor: core}}
	equiv := func(d *registry.Descriptor) []*registry.Descriptor {
		if d == core {
			return []*registry.Descriptor{grouped}
		}
		return []*registry.Descriptor{core}
	}
	rule := func(group string) map[string]any {
		return map[string]any{"resourceRules": []any{map[string]any{"operations": []any{"CREATE"}, "apiGroups": []any{group},
			"apiVersions": []any{"v1"}, "resources": []any{"events"}}}}
	}
	none := func(string) (map[string]string, error) { return nil, nil }
	tests := []struct {
		name    string
		request *registry.Descriptor
		group   string
		want    *registry.Descriptor
	}{
		{"core request, events-group rule", core, "events.example", grouped},
		{"events-group request, core rule", grouped, "", core},
		{"core request, core rule", core, "", core},
	}
	for _, tt := range tests {
		a := &Attributes{Descriptor: tt.request, Operation: OpCreate, Namespace: "ns", Name: "e",
			Object: registry.Object{"apiVersion": tt.request.GroupVersion(), "kind": "Event", "metadata": map[string]any{"name": "e"}}}
		got, err := parseMatchResources(rule(tt.group)).matches(a, none, equiv)
		if got != tt.want || err != nil {
			t.Errorf("%s: matched %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}

// TestPoliciesEquivalents checks the equivalent resources the policies
// match through: computed for every descriptor at once, the same until
// the registry changes, and current after it does.
func TestPoliciesEquivalents(t *testing.T) {
	t.Parallel()
	core := &registry.Descriptor{Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
	grouped := &registry.Descriptor{Group: "events.example", Version: "v1", Resource: "events", Kind: "Event", Namespaced: true,
		Storage: &registry.Storage{Descriptor: core}}
	reg := registry.New()
	reg.Add(configMaps)
	reg.Add(core)
	reg.Add(grouped)
	b, _ := config.LookupBrand("plat")
	p := NewPolicies(reg, fakeLookup{}, nil, b)
	if !p.Empty() {
		t.Error("no policies: not empty")
	}
	first := p.equivalents(core)
	if !reflect.DeepEqual(first, []*registry.Descriptor{grouped}) || !reflect.DeepEqual(p.equivalents(grouped), []*registry.Descriptor{core}) || p.equivalents(configMaps) != nil {
		t.Fatalf("equivalents %v", first)
	}
	if again := p.equivalents(core); &again[0] != &first[0] {
		t.Error("equivalents computed again without a registry change")
	}
	beta := &registry.Descriptor{Group: "events.example", Version: "v1beta1", Resource: "events", Kind: "Event", Namespaced: true,
		Storage: &registry.Storage{Descriptor: core}}
	reg.Add(beta)
	if got := p.equivalents(core); len(got) != 2 {
		t.Errorf("after a new version: equivalents %v", got)
	}
	p.ReplacePolicies([]registry.Object{{"metadata": map[string]any{"name": "p"}, "spec": map[string]any{}}})
	if !p.Empty() {
		t.Error("an unbound policy: not empty")
	}
	p.ReplaceBindings([]registry.Object{{"metadata": map[string]any{"name": "b"}, "spec": map[string]any{"policyName": "p"}}})
	if p.Empty() {
		t.Error("a bound policy: empty")
	}
}

// funcConverter converts with convert, or fails with err.
type funcConverter struct {
	convert func(registry.Object, string) registry.Object
	err     error
}

func (c funcConverter) Schema(string) *schema.Schema { return nil }
func (c funcConverter) Convert(_ context.Context, obj registry.Object, apiVersion string) (registry.Object, error) {
	if c.err != nil {
		return nil, c.err
	}
	return c.convert(obj, apiVersion), nil
}
func (c funcConverter) ConvertList(context.Context, []registry.Object, string) ([]registry.Object, error) {
	return nil, errors.New("not a list")
}

// TestAsEquivalentThroughConverter checks that a request seen as an
// equivalent version of a resource with a Converter is converted by it,
// old object included, and that a failed conversion fails the request.
func TestAsEquivalentThroughConverter(t *testing.T) {
	t.Parallel()
	failed := errors.New("conversion failed")
	tests := []struct {
		name string
		cv   funcConverter
		want registry.Object
		err  error
	}{
		{name: "converted", cv: funcConverter{convert: func(o registry.Object, to string) registry.Object {
			o["apiVersion"], o["from"] = to, o["apiVersion"]
			return o
		}}, want: registry.Object{"apiVersion": "g/v2", "kind": "K", "from": "g/v1"}},
		{name: "failed", cv: funcConverter{err: failed}, err: failed},
	}
	for _, tt := range tests {
		st := &registry.Descriptor{Group: "g", Version: "v2", Resource: "ks", Kind: "K"}
		st.Storage = &registry.Storage{Descriptor: st, Converter: tt.cv}
		v1 := &registry.Descriptor{Group: "g", Version: "v1", Resource: "ks", Kind: "K", Storage: st.Storage}
		v2 := &registry.Descriptor{Group: "g", Version: "v2", Resource: "ks", Kind: "K", Storage: st.Storage}
		a := &Attributes{Descriptor: v1, Operation: OpUpdate, Name: "x", Object: registry.Object{"kind": "K"}, OldObject: registry.Object{"kind": "K"}}
		got, err := a.as(context.Background(), v2)
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.err)
			continue
		}
		if err == nil && (!reflect.DeepEqual(got.Object, tt.want) || !reflect.DeepEqual(got.OldObject, tt.want)) {
			t.Errorf("%s: %v / %v, want %v", tt.name, got.Object, got.OldObject, tt.want)
		}
		if a.Object["apiVersion"] != nil {
			t.Errorf("%s: the request's object was changed: %v", tt.name, a.Object)
		}
	}
}
