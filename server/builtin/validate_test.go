package builtin

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/validation"
)

// brand is the brand most tests run under; the rules that spell the long
// domain run under every brand.
var brand = config.Brands[config.BrandNames()[0]]

func descriptor(t *testing.T, b config.Brand, kind string) *registry.Descriptor {
	t.Helper()
	for _, d := range coreV1(b) {
		if d.Kind == kind {
			return d
		}
	}
	t.Fatalf("no descriptor for %s", kind)
	return nil
}

func errStrings(errs apierr.FieldErrors) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func checkErrs(t *testing.T, name string, got apierr.FieldErrors, want []string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if g := errStrings(got); !slices.Equal(g, want) {
		t.Errorf("%s:\n got  %q\n want %q", name, g, want)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// qualifiedNameErrs renders the qualified-name problems of v at field.
func qualifiedNameErrs(field, v string) []string {
	var out []string
	for _, msg := range validation.IsQualifiedName(v) {
		out = append(out, apierr.Invalid(field, v, msg).Error())
	}
	return out
}

const (
	configKeyMsg = `a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`
	immutableMsg = "Forbidden: field is immutable when `immutable` is set"
)

func TestConfigMapValidate(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "ConfigMap")
	big := strings.Repeat("x", maxDataSize/2+1)
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"valid", registry.Object{"data": map[string]any{"a.b": "1", "A_B-c": "2"}, "binaryData": map[string]any{"bin": b64("x")}}, nil},
		{"empty", registry.Object{}, nil},
		{"bad keys", registry.Object{"data": map[string]any{"a b": "1", ".": "", "..": "", "..x": ""}, "binaryData": map[string]any{"b/c": ""}}, []string{
			`data[.]: Invalid value: ".": must not be '.'`,
			`data[..]: Invalid value: "..": must not be '..'`,
			`data[..x]: Invalid value: "..x": must not start with '..'`,
			`data[a b]: Invalid value: "a b": ` + configKeyMsg,
			`binaryData[b/c]: Invalid value: "b/c": ` + configKeyMsg,
		}},
		{"long key", registry.Object{"data": map[string]any{strings.Repeat("k", 254): ""}}, []string{
			`data[` + strings.Repeat("k", 254) + `]: Invalid value: "` + strings.Repeat("k", 254) + `": must be no more than 253 characters`,
		}},
		{"key in both", registry.Object{"data": map[string]any{"k": "1"}, "binaryData": map[string]any{"k": b64("1")}}, []string{
			`data[k]: Invalid value: "k": duplicate of key present in binaryData`,
		}},
		{"too big", registry.Object{"data": map[string]any{"a": big}, "binaryData": map[string]any{"b": b64(big)}}, []string{
			`: Too long: may not be more than 1048576 bytes`,
		}},
		{"at the limit", registry.Object{"data": map[string]any{"a": strings.Repeat("x", maxDataSize-1)}, "binaryData": map[string]any{"b": b64("x")}}, nil},
	}
	for _, tt := range tests {
		checkErrs(t, tt.name, d.Strategy.Validate(tt.obj), tt.want)
	}
}

func TestConfigMapValidateUpdate(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "ConfigMap")
	frozen := registry.Object{"immutable": true, "data": map[string]any{"a": "1"}}
	tests := []struct {
		name     string
		obj, old registry.Object
		want     []string
	}{
		{"mutable", registry.Object{"data": map[string]any{"a": "2"}}, registry.Object{"data": map[string]any{"a": "1"}}, nil},
		{"unchanged", registry.Object{"immutable": true, "data": map[string]any{"a": "1"}}, frozen, nil},
		{"made immutable", registry.Object{"immutable": true, "data": map[string]any{"a": "2"}}, registry.Object{"immutable": false, "data": map[string]any{"a": "1"}}, nil},
		{"empty and absent", registry.Object{"immutable": true, "binaryData": map[string]any{}}, registry.Object{"immutable": true}, nil},
		{"everything", registry.Object{"immutable": false, "data": map[string]any{"a": "2"}, "binaryData": map[string]any{"b": ""}}, frozen, []string{
			"immutable: " + immutableMsg, "data: " + immutableMsg, "binaryData: " + immutableMsg,
		}},
		{"immutable dropped", registry.Object{"data": map[string]any{"a": "1"}}, frozen, []string{"immutable: " + immutableMsg}},
	}
	for _, tt := range tests {
		checkErrs(t, tt.name, d.Strategy.ValidateUpdate(tt.obj, tt.old), tt.want)
	}
}

func TestSecretValidate(t *testing.T) {
	t.Parallel()
	for _, name := range config.BrandNames() {
		b := config.Brands[name]
		d := descriptor(t, b, "Secret")
		sa := b.Label("service-account.name")
		secret := func(typ string, data map[string]any) registry.Object {
			obj := registry.Object{"metadata": map[string]any{"name": "s"}, "type": typ}
			if data != nil {
				obj["data"] = data
			}
			return obj
		}
		withAnnotation := secret(b.Label("service-account-token"), nil)
		withAnnotation["metadata"].(map[string]any)["annotations"] = map[string]any{sa: "default"}
		tests := []struct {
			name string
			obj  registry.Object
			want []string
		}{
			{"opaque", secret("Opaque", map[string]any{"a": b64("x")}), nil},
			{"unknown type", secret("example.com/thing", nil), nil},
			{"bad key", secret("Opaque", map[string]any{"a:b": b64("x")}), []string{`data[a:b]: Invalid value: "a:b": ` + configKeyMsg}},
			{"too big", secret("Opaque", map[string]any{"a": b64(strings.Repeat("x", maxDataSize)), "b": b64("y")}), []string{
				"data: Too long: may not be more than 1048576 bytes",
			}},
			{"at the limit", secret("Opaque", map[string]any{"a": b64(strings.Repeat("x", maxDataSize))}), nil},
			{"token without account", secret(b.Label("service-account-token"), nil), []string{
				"metadata.annotations[" + sa + "]: Required value",
			}},
			{"token", withAnnotation, nil},
			{"dockercfg missing", secret(b.Label("dockercfg"), map[string]any{}), []string{"data[.dockercfg]: Required value"}},
			{"dockercfg not json", secret(b.Label("dockercfg"), map[string]any{".dockercfg": b64("x")}), []string{
				`data[.dockercfg]: Invalid value: "<secret contents redacted>": invalid character 'x' looking for beginning of value`,
			}},
			{"dockercfg", secret(b.Label("dockercfg"), map[string]any{".dockercfg": b64(`{"r":{}}`)}), nil},
			{"dockerconfigjson missing", secret(b.Label("dockerconfigjson"), map[string]any{".dockercfg": b64("{}")}), []string{
				"data[.dockerconfigjson]: Required value",
			}},
			{"dockerconfigjson array", secret(b.Label("dockerconfigjson"), map[string]any{".dockerconfigjson": b64("[]")}), []string{
				`data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": json: cannot unmarshal array into Go value of type map[string]interface {}`,
			}},
			{"dockerconfigjson truncated", secret(b.Label("dockerconfigjson"), map[string]any{".dockerconfigjson": b64(`{"auths":`)}), []string{
				`data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": unexpected end of JSON input`,
			}},
			{"dockerconfigjson", secret(b.Label("dockerconfigjson"), map[string]any{".dockerconfigjson": b64(`{"auths":{}}`)}), nil},
			{"basic-auth empty", secret(b.Label("basic-auth"), nil), []string{"data[username]: Required value", "data[password]: Required value"}},
			{"basic-auth password only", secret(b.Label("basic-auth"), map[string]any{"password": ""}), nil},
			{"basic-auth username only", secret(b.Label("basic-auth"), map[string]any{"username": b64("u")}), nil},
			{"ssh-auth empty key", secret(b.Label("ssh-auth"), map[string]any{"ssh-privatekey": ""}), []string{"data[ssh-privatekey]: Required value"}},
			{"ssh-auth", secret(b.Label("ssh-auth"), map[string]any{"ssh-privatekey": b64("k")}), nil},
			{"tls without key", secret(b.Label("tls"), map[string]any{"tls.crt": b64("c")}), []string{"data[tls.key]: Required value"}},
			{"tls empty", secret(b.Label("tls"), nil), []string{"data[tls.crt]: Required value", "data[tls.key]: Required value"}},
			{"tls empty values", secret(b.Label("tls"), map[string]any{"tls.crt": "", "tls.key": ""}), nil},
			{"other brand's type is opaque", secret(strings.Replace(b.Label("tls"), b.LongDomain, "example.com", 1), nil), nil},
		}
		for _, tt := range tests {
			checkErrs(t, name+": "+tt.name, d.Strategy.Validate(tt.obj), tt.want)
		}
	}
}

func TestSecretStringDataIsValidated(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "Secret")
	obj := registry.Object{"type": brand.Label("basic-auth"), "stringData": map[string]any{"user": "u"}}
	d.Strategy.Default(obj)
	checkErrs(t, "stringData", d.Strategy.Validate(obj), []string{"data[username]: Required value", "data[password]: Required value"})
	obj = registry.Object{"stringData": map[string]any{"a b": "x"}}
	d.Strategy.Default(obj)
	checkErrs(t, "stringData key", d.Strategy.Validate(obj), []string{`data[a b]: Invalid value: "a b": ` + configKeyMsg})
}

func TestSecretValidateUpdate(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "Secret")
	frozen := registry.Object{"type": "Opaque", "immutable": true, "data": map[string]any{"a": b64("1")}}
	tests := []struct {
		name     string
		obj, old registry.Object
		want     []string
	}{
		{"data change", registry.Object{"type": "Opaque", "data": map[string]any{"a": b64("2")}}, registry.Object{"type": "Opaque"}, nil},
		{"type change", registry.Object{"type": "Opaque"}, registry.Object{"type": brand.Label("tls")}, []string{`type: Invalid value: "Opaque": field is immutable`}},
		{"immutable unchanged", registry.Object{"type": "Opaque", "immutable": true, "data": map[string]any{"a": b64("1")}}, frozen, nil},
		{"immutable changed", registry.Object{"type": "x", "data": map[string]any{}}, frozen, []string{
			`type: Invalid value: "x": field is immutable`, "immutable: " + immutableMsg, "data: " + immutableMsg,
		}},
	}
	for _, tt := range tests {
		checkErrs(t, tt.name, d.Strategy.ValidateUpdate(tt.obj, tt.old), tt.want)
	}
}

func TestLimitRangeValidate(t *testing.T) {
	t.Parallel()
	for _, name := range config.BrandNames() {
		b := config.Brands[name]
		d := descriptor(t, b, "LimitRange")
		native := b.Label("thing")
		lr := func(items ...map[string]any) registry.Object {
			l := make([]any, len(items))
			for i, it := range items {
				l[i] = it
			}
			return registry.Object{"metadata": map[string]any{"name": "l"}, "spec": map[string]any{"limits": l}}
		}
		res := func(kv ...string) map[string]any {
			m := map[string]any{}
			for i := 0; i < len(kv); i += 2 {
				m[kv[i]] = kv[i+1]
			}
			return m
		}
		const p = "spec.limits[0]"
		tests := []struct {
			name string
			obj  registry.Object
			want []string
		}{
			{"no spec", registry.Object{}, nil},
			{"valid container", lr(map[string]any{"type": "Container",
				"min": res("cpu", "100m", "memory", "64Mi"), "max": res("cpu", "2", "memory", "1Gi"),
				"default": res("cpu", "1", "memory", "512Mi"), "defaultRequest": res("cpu", "500m", "memory", "256Mi"),
				"maxLimitRequestRatio": res("cpu", "20"),
			}), nil},
			{"valid pod and claim", lr(
				map[string]any{"type": "Pod", "max": res("cpu", "4", "hugepages-2Mi", "1Gi")},
				map[string]any{"type": "PersistentVolumeClaim", "min": res("storage", "1Gi"), "max": res("requests.storage", "10Gi")},
				map[string]any{"type": "example.com/Custom", "max": res("pods", "10", "example.com/x", "1")},
			), nil},
			{"equal spellings", lr(map[string]any{"type": "Container", "min": map[string]any{"memory": "1Gi"}, "max": map[string]any{"memory": int64(1073741824)}}), nil},
			{"unknown type", lr(map[string]any{"type": "Foo"}), []string{
				p + `.type: Invalid value: "Foo": must be a standard limit type or fully qualified`,
			}},
			{"missing type", lr(map[string]any{}), qualifiedNameErrs(p+".type", "")},
			{"duplicate type", lr(map[string]any{"type": "Container"}, map[string]any{"type": "Pod"}, map[string]any{"type": "Container"}), []string{
				`spec.limits[2].type: Duplicate value: "Container"`,
			}},
			{"resource names", lr(map[string]any{"type": "Container", "max": res(
				"pods", "1", "foo", "1", native, "1", "example.com/gpu", "1", "requests.example.com/gpu", "1", "a/b/c", "1")}),
				[]string{
					p + `.max[a/b/c]: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
					p + `.max[a/b/c]: Invalid value: "a/b/c": doesn't follow extended resource name standard`,
					p + `.max[foo]: Invalid value: "foo": must be a standard resource type or fully qualified`,
					p + `.max[foo]: Invalid value: "foo": must be a standard resource for containers`,
					p + `.max[pods]: Invalid value: "pods": must be a standard resource for containers`,
					p + `.max[requests.example.com/gpu]: Invalid value: "requests.example.com/gpu": doesn't follow extended resource name standard`,
				},
			},
			{"claim resource names", lr(map[string]any{"type": "PersistentVolumeClaim", "min": res("storage", "1Gi", "bogus", "1")}), []string{
				p + `.min[bogus]: Invalid value: "bogus": must be a standard resource type or fully qualified`,
			}},
			{"claim without storage", lr(map[string]any{"type": "PersistentVolumeClaim", "max": res("requests.storage", "1Gi")}), []string{
				p + ".limits: Required value: either minimum or maximum storage value is required, but neither was provided",
			}},
			{"pod defaults", lr(map[string]any{"type": "Pod", "default": res("cpu", "1"), "defaultRequest": res("bogus", "1"), "max": res("cpu", "2")}), []string{
				p + ".default: Forbidden: may not be specified when `type` is 'Pod'",
				p + ".defaultRequest: Forbidden: may not be specified when `type` is 'Pod'",
			}},
			{"pod empty defaults", lr(map[string]any{"type": "Pod", "default": map[string]any{}}), nil},
			{"min above max", lr(map[string]any{"type": "Container", "min": res("cpu", "2"), "max": res("cpu", "1500m")}), []string{
				p + ".min[cpu]: Invalid value: 2: min value 2 is greater than max value 1500m",
			}},
			{"request below min", lr(map[string]any{"type": "Container", "min": res("cpu", "500m"), "defaultRequest": res("cpu", "100m")}), []string{
				p + ".defaultRequest[cpu]: Invalid value: 100m: min value 500m is greater than default request value 100m",
			}},
			{"request above max", lr(map[string]any{"type": "Container", "max": res("memory", "1Gi"), "defaultRequest": res("memory", "2Gi")}), []string{
				p + ".defaultRequest[memory]: Invalid value: 2Gi: default request value 2Gi is greater than max value 1Gi",
			}},
			{"request above default", lr(map[string]any{"type": "Container", "default": res("cpu", "1"), "defaultRequest": res("cpu", "1001m")}), []string{
				p + ".defaultRequest[cpu]: Invalid value: 1001m: default request value 1001m is greater than default limit value 1",
			}},
			{"default below min", lr(map[string]any{"type": "Container", "min": res("cpu", "2"), "default": res("cpu", "1")}), []string{
				p + ".default[cpu]: Invalid value: 2: min value 2 is greater than default value 1",
			}},
			{"default above max", lr(map[string]any{"type": "Container", "max": res("cpu", "1"), "default": res("cpu", "2")}), []string{
				p + ".default[cpu]: Invalid value: 1: default value 2 is greater than max value 1",
			}},
			{"everything out of order", lr(map[string]any{"type": "Container",
				"min": res("cpu", "4"), "max": res("cpu", "1"), "default": res("cpu", "2"), "defaultRequest": res("cpu", "3")}), []string{
				p + ".min[cpu]: Invalid value: 4: min value 4 is greater than max value 1",
				p + ".defaultRequest[cpu]: Invalid value: 3: min value 4 is greater than default request value 3",
				p + ".defaultRequest[cpu]: Invalid value: 3: default request value 3 is greater than max value 1",
				p + ".defaultRequest[cpu]: Invalid value: 3: default request value 3 is greater than default limit value 2",
				p + ".default[cpu]: Invalid value: 4: min value 4 is greater than default value 2",
				p + ".default[cpu]: Invalid value: 1: default value 2 is greater than max value 1",
			}},
			{"ratio below one", lr(map[string]any{"type": "Container", "maxLimitRequestRatio": res("cpu", "500m")}), []string{
				p + ".maxLimitRequestRatio[cpu]: Invalid value: 500m: ratio 500m is less than 1",
			}},
			{"ratio one", lr(map[string]any{"type": "Container", "maxLimitRequestRatio": res("cpu", "1")}), nil},
			{"ratio above max/min", lr(map[string]any{"type": "Container", "min": res("cpu", "100m"), "max": res("cpu", "250m"), "maxLimitRequestRatio": res("cpu", "3")}), []string{
				p + ".maxLimitRequestRatio[cpu]: Invalid value: 3: ratio 3 is greater than max/min = 2.500000",
			}},
			{"ratio at max/min", lr(map[string]any{"type": "Container", "min": res("cpu", "100m"), "max": res("cpu", "250m"), "maxLimitRequestRatio": res("cpu", "2.5")}), nil},
			{"ratio with zero min", lr(map[string]any{"type": "Container", "min": res("memory", "0"), "max": res("memory", "1Gi"), "maxLimitRequestRatio": res("memory", "100")}), nil},
			{"ratio of huge values", lr(map[string]any{"type": "PersistentVolumeClaim", "min": res("storage", "1E"), "max": res("storage", "2E"), "maxLimitRequestRatio": res("storage", "3")}), []string{
				p + ".maxLimitRequestRatio[storage]: Invalid value: 3: ratio 3 is greater than max/min = 2.000000",
			}},
			{"no overcommit", lr(map[string]any{"type": "Container",
				"default": res("example.com/gpu", "2", "hugepages-2Mi", "4Mi", native, "2"), "defaultRequest": res("example.com/gpu", "1", "hugepages-2Mi", "2Mi", native, "1")}), []string{
				p + ".defaultRequest[example.com/gpu]: Invalid value: 1: default value 2 must equal to defaultRequest value 1 in example.com/gpu",
				p + ".defaultRequest[hugepages-2Mi]: Invalid value: 2Mi: default value 4Mi must equal to defaultRequest value 2Mi in hugepages-2Mi",
			}},
			{"second item", lr(map[string]any{"type": "Pod"}, map[string]any{"type": "Container", "min": res("cpu", "2"), "max": res("cpu", "1")}), []string{
				"spec.limits[1].min[cpu]: Invalid value: 2: min value 2 is greater than max value 1",
			}},
		}
		for _, tt := range tests {
			checkErrs(t, name+": "+tt.name, d.Strategy.Validate(tt.obj), tt.want)
		}
	}
}

func TestEventValidate(t *testing.T) {
	t.Parallel()
	for _, name := range config.BrandNames() {
		b := config.Brands[name]
		d := descriptor(t, b, "Event")
		ev := func(ns, ins string, extra ...any) registry.Object {
			obj := registry.Object{"metadata": map[string]any{"name": "e", "namespace": ns}, "involvedObject": map[string]any{"kind": "Pod", "name": "p"}}
			if ins != "" {
				obj["involvedObject"].(map[string]any)["namespace"] = ins
			}
			for i := 0; i < len(extra); i += 2 {
				obj[extra[i].(string)] = extra[i+1]
			}
			return obj
		}
		const when = "2024-01-02T03:04:05.000000Z"
		full := func(ns, ins string, extra ...any) registry.Object {
			return ev(ns, ins, append([]any{"eventTime", when, "reportingComponent", "example.com/ctl", "reportingInstance", "ctl-1", "action", "Scheduling", "reason", "Scheduled"}, extra...)...)
		}
		mismatch := func(ins string) string {
			return fmt.Sprintf("involvedObject.namespace: Invalid value: %q: does not match event.namespace", ins)
		}
		tests := []struct {
			name string
			obj  registry.Object
			want []string
		}{
			{"legacy same namespace", ev("ns1", "ns1"), nil},
			{"legacy cluster object in default", ev("default", ""), nil},
			{"legacy cluster object elsewhere", ev("ns1", ""), []string{mismatch("")}},
			{"legacy cluster object in system", ev(b.SystemNamespace, ""), []string{mismatch("")}},
			{"legacy other namespace", ev("ns1", "ns2"), []string{mismatch("ns2")}},
			{"legacy needs no reporter", ev("ns1", "ns1", "reason", strings.Repeat("r", 300)), nil},
			{"new valid", full("ns1", "ns1"), nil},
			{"new cluster object in default", full("default", ""), nil},
			{"new cluster object in system", full(b.SystemNamespace, ""), nil},
			{"new cluster object elsewhere", full("ns1", ""), []string{mismatch("")}},
			{"new other namespace is allowed", full("ns1", "ns2"), nil},
			{"new without reporter", ev("ns1", "ns1", "eventTime", when), append(append([]string{"reportingController: Required value"},
				qualifiedNameErrs("reportingController", "")...),
				"reportingInstance: Required value", "action: Required value", "reason: Required value")},
			{"new bad controller", full("ns1", "ns1", "reportingComponent", "bad name"), qualifiedNameErrs("reportingController", "bad name")},
			{"new too long", full("ns1", "ns1", "reportingInstance", strings.Repeat("i", 129), "action", strings.Repeat("a", 129),
				"reason", strings.Repeat("r", 129), "message", strings.Repeat("m", 1025)), []string{
				`reportingInstance: Invalid value: "": can have at most 128 characters`,
				`action: Invalid value: "": can have at most 128 characters`,
				`reason: Invalid value: "": can have at most 128 characters`,
				`message: Invalid value: "": can have at most 1024 characters`,
			}},
			{"new at the limits", full("ns1", "ns1", "reportingInstance", strings.Repeat("i", 128), "action", strings.Repeat("a", 128),
				"reason", strings.Repeat("r", 128), "message", strings.Repeat("m", 1024)), nil},
		}
		for _, tt := range tests {
			checkErrs(t, name+": "+tt.name, d.Strategy.Validate(tt.obj), tt.want)
		}
	}
}

func TestNamespaceValidate(t *testing.T) {
	t.Parallel()
	for _, name := range config.BrandNames() {
		b := config.Brands[name]
		d := descriptor(t, b, "Namespace")
		ns := func(rv string, fins ...string) registry.Object {
			md := map[string]any{"name": "n"}
			if rv != "" {
				md["resourceVersion"] = rv
			}
			return registry.Object{"metadata": md, "spec": map[string]any{"finalizers": registry.AnyList(fins)}, "status": map[string]any{"phase": "Active"}}
		}
		notStandard := func(field, f string) string {
			return fmt.Sprintf("%s: Invalid value: %q: name is neither a standard finalizer name nor is it fully qualified", field, f)
		}
		tests := []struct {
			name string
			obj  registry.Object
			want []string
		}{
			{"standard", ns("", b.NamespaceFinalizer, "orphan", "foregroundDeletion", "example.com/x"), nil},
			{"not standard", ns("", b.NamespaceFinalizer, "foo"), []string{notStandard("spec.finalizers", "foo")}},
			{"not qualified", ns("", "bad name", "example.com/ok"), append(qualifiedNameErrs("spec.finalizers", "bad name"), notStandard("spec.finalizers", "bad name"))},
			{"bad prefix", ns("", "Bad_/x"), qualifiedNameErrs("spec.finalizers", "Bad_/x")},
		}
		for _, tt := range tests {
			checkErrs(t, name+": "+tt.name, d.Strategy.Validate(tt.obj), tt.want)
		}

		updates := []struct {
			name     string
			obj, old registry.Object
			want     []string
		}{
			{"unchanged", ns("5", b.NamespaceFinalizer), ns("5", b.NamespaceFinalizer), nil},
			{"finalize", ns("5", "example.com/a", "foo"), ns("5", b.NamespaceFinalizer), []string{notStandard("spec.finalizers[1]", "foo")}},
			{"finalize all away", ns("5"), ns("5", b.NamespaceFinalizer), nil},
		}
		for _, tt := range updates {
			checkErrs(t, name+": "+tt.name, d.Strategy.ValidateUpdate(tt.obj, tt.old), tt.want)
		}
	}
}

func TestNamespaceStatusPhase(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "Namespace")
	ns := func(deleted bool, phase any) registry.Object {
		md := map[string]any{"name": "n", "resourceVersion": "7"}
		if deleted {
			md["deletionTimestamp"] = "2024-01-02T03:04:05Z"
		}
		st := map[string]any{}
		if phase != nil {
			st["phase"] = phase
		}
		return registry.Object{"metadata": md, "status": st}
	}
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"active", ns(false, "Active"), nil},
		{"terminating", ns(true, "Terminating"), nil},
		{"terminating too early", ns(false, "Terminating"), []string{"status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"}},
		{"no phase", ns(false, nil), []string{"status.Phase: Invalid value: \"\": may only be 'Active' if `deletionTimestamp` is empty"}},
		{"active while deleted", ns(true, "Active"), []string{"status.Phase: Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty"}},
	}
	for _, tt := range tests {
		checkErrs(t, tt.name, d.Strategy.ValidateUpdate(tt.obj, ns(false, "Active")), tt.want)
	}
}

func TestServiceAccountHasNoRules(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "ServiceAccount")
	if d.Strategy.Validate != nil || d.Strategy.ValidateUpdate != nil {
		t.Error("upstream validates only the metadata of a ServiceAccount")
	}
	obj := registry.Object{"secrets": []any{map[string]any{"name": "s", "namespace": "x"}, map[string]any{}}, "imagePullSecrets": []any{map[string]any{"name": ""}}}
	d.Strategy.PrepareForCreate(obj)
	if got := fmt.Sprint(obj["secrets"]); got != "[map[name:s] map[]]" {
		t.Errorf("secrets trimmed to %s", got)
	}
}
