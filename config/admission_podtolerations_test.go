package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestDecodePodTolerationRestrictionConfig(t *testing.T) {
	for _, brandName := range BrandNames() {
		b := Brands[brandName]
		head := "apiVersion: " + AdmissionConfigAPIVersions(b)[0] + "\nkind: AdmissionConfiguration\n"
		version := PodTolerationRestrictionConfigAPIVersions(b)[0]
		entry := func(body string) string {
			return head + "plugins:\n- name: PodTolerationRestriction\n  configuration:\n    apiVersion: " + version + "\n    kind: Configuration\n" + body
		}
		seconds := int64(30)
		const prefix = `couldn't init admission plugin "PodTolerationRestriction": `
		tests := []struct {
			name string
			in   string
			want PodTolerationRestrictionConfiguration
			err  string
		}{
			{"no file", "", PodTolerationRestrictionConfiguration{}, ""},
			{"no entry", head, PodTolerationRestrictionConfiguration{}, ""},
			{"entry without configuration", head + "plugins:\n- name: PodTolerationRestriction\n", PodTolerationRestrictionConfiguration{}, ""},
			{"default and whitelist", entry("    default:\n    - {key: key1, operator: Equal, value: value1}\n    whitelist:\n    - {key: key2, operator: Exists, effect: NoExecute, tolerationSeconds: 30}\n    - {operator: Exists}\n"),
				PodTolerationRestrictionConfiguration{
					Default:   []Toleration{{Key: "key1", Operator: "Equal", Value: "value1"}},
					Whitelist: []Toleration{{Key: "key2", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: &seconds}, {Operator: "Exists"}},
				}, ""},
			// Upstream's decoder ignores what it does not know, and names
			// are matched exactly.
			{"unknown and miscased members ignored", entry("    extra: 1\n    Default: [{key: a}]\n    default:\n    - {key: a, operator: Exists, Effect: NoSchedule, other: x}\n"),
				PodTolerationRestrictionConfiguration{Default: []Toleration{{Key: "a", Operator: "Exists"}}}, ""},
			{"wrong version", head + "plugins:\n- name: PodTolerationRestriction\n  configuration:\n    apiVersion: v1\n    kind: Configuration\n", PodTolerationRestrictionConfiguration{},
				prefix + `no kind "Configuration" is registered for version "v1": want kind Configuration in ` + version},
			{"wrong kind", strings.Replace(entry(""), "kind: Configuration", "kind: Config", 1), PodTolerationRestrictionConfiguration{},
				prefix + `no kind "Config" is registered for version "` + version + `": want kind Configuration in ` + version},
			{"wrong type", entry("    default: {key: a}\n"), PodTolerationRestrictionConfiguration{}, prefix + "default: must be a list, got an object"},
			{"invalid toleration", entry("    whitelist:\n    - {operator: Equal, value: v}\n"), PodTolerationRestrictionConfiguration{},
				prefix + "invalid config: [podtolerationrestriction.whitelist[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"]"},
			{"invalid tolerations", entry("    default:\n    - {key: 'a/b/c', operator: In}\n    - {key: k, operator: Exists, value: v, effect: Never, tolerationSeconds: 5}\n    whitelist:\n    - {key: k, value: 'a b'}\n"),
				PodTolerationRestrictionConfiguration{},
				prefix + "invalid config: [" +
					`podtolerationrestriction.default[0].key: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName') ` +
					`podtolerationrestriction.default[0].operator: Unsupported value: "In": supported values: "Equal", "Exists" ` +
					"podtolerationrestriction.default[1].effect: Invalid value: \"Never\": effect must be 'NoExecute' when `tolerationSeconds` is set " +
					`podtolerationrestriction.default[1].operator: Invalid value: core.Toleration{Key:"k", Operator:"Exists", Value:"v", Effect:"Never", TolerationSeconds:&5}: value must be empty when ` + "`operator` is 'Exists' " +
					`podtolerationrestriction.default[1].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute" ` +
					`podtolerationrestriction.whitelist[0].operator: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]`},
			{"invalid key prefix", entry("    default:\n    - {key: '/k', operator: Exists}\n    - {key: 'Ex.com/k', operator: Exists}\n"), PodTolerationRestrictionConfiguration{},
				prefix + "invalid config: [" +
					`podtolerationrestriction.default[0].key: Invalid value: "/k": prefix part must be non-empty ` +
					`podtolerationrestriction.default[1].key: Invalid value: "Ex.com/k": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]`},
		}
		for _, tc := range tests {
			t.Run(brandName+"/"+tc.name, func(t *testing.T) {
				got, ok := decodeAdmissionCase(t, tc.in, t.TempDir(), b, AdmissionPluginsOff{PluginEventRateLimit: true, PluginImagePolicyWebhook: true}, tc.err)
				if !ok {
					return
				}
				if !reflect.DeepEqual(got.PodTolerationRestriction, tc.want) {
					t.Errorf("got %+v\nwant %+v", got.PodTolerationRestriction, tc.want)
				}
			})
		}
	}
}
