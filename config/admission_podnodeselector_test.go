package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDecodePodNodeSelectorConfig(t *testing.T) {
	for _, brandName := range BrandNames() {
		b := Brands[brandName]
		head := "apiVersion: " + AdmissionConfigAPIVersions(b)[0] + "\nkind: AdmissionConfiguration\n"
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "pns.yaml"), []byte("podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		stream := `{"podNodeSelectorPluginConfig":{"ns1":"a"}} {"podNodeSelectorPluginConfig":{"ns2":1}}` + "\n" +
			`{"podNodeSelectorPluginConfig":{"ns3":"c","ns1":"z"}} {"podNodeSelectorPluginConfig":{` + `"ns4":"d"}`
		if err := os.WriteFile(filepath.Join(dir, "stream.json"), []byte(stream), 0o600); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			in   string
			want PodNodeSelectorConfiguration
			err  string
		}{
			{"no file", "", nil, ""},
			{"no entry", head, nil, ""},
			{"inline", head + "plugins:\n- name: PodNodeSelector\n  configuration:\n    podNodeSelectorPluginConfig:\n      clusterDefaultNodeSelector: env=prod\n      tools: 'zone=a, gpu=yes'\n",
				PodNodeSelectorConfiguration{"clusterDefaultNodeSelector": "env=prod", "tools": "zone=a, gpu=yes"}, ""},
			{"path", head + "plugins:\n- name: PodNodeSelector\n  path: pns.yaml\n", PodNodeSelectorConfiguration{"clusterDefaultNodeSelector": "env=prod"}, ""},
			// Upstream reads the member without regard to case and skips
			// what it cannot decode, never refusing the file.
			{"lenient", head + "plugins:\n- name: PodNodeSelector\n  configuration:\n    PodNodeSelectorPluginConfig: {a: x, b: 1}\n    other: 1\n",
				PodNodeSelectorConfiguration{"a": "x", "b": ""}, ""},
			{"not a map", head + "plugins:\n- name: PodNodeSelector\n  configuration:\n    podNodeSelectorPluginConfig: [x]\n", nil, ""},
			// A file holding only the plugin's unversioned configuration
			// configures it, whatever apiVersion and kind it gives.
			{"legacy file", "podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n  ns1: zone=a\n",
				PodNodeSelectorConfiguration{"clusterDefaultNodeSelector": "env=prod", "ns1": "zone=a"}, ""},
			{"legacy file of another kind", "kind: Config\npodNodeSelectorPluginConfig:\n  ns1: zone=a\n", PodNodeSelectorConfiguration{"ns1": "zone=a"}, ""},
			{"legacy image policy file", "imagePolicy:\n  kubeConfigFile: x\n", nil, ""},
			// Every document is read into one configuration, as upstream
			// reads them: later ones add and replace, bad ones are skipped.
			{"later documents add and replace", "podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n  ns1: zone=a\n" +
				"--- # the next one\npodNodeSelectorPluginConfig:\n  ns1: zone=b\n  ns2: x\n---\n: [\n---\npodNodeSelectorPluginConfig:\n  ns3: zone=c\n",
				PodNodeSelectorConfiguration{"clusterDefaultNodeSelector": "env=prod", "ns1": "zone=b", "ns2": "x", "ns3": "zone=c"}, ""},
			{"a line that only starts like a separator", "podNodeSelectorPluginConfig:\n  ns1: |\n    a\n    ---x\n",
				PodNodeSelectorConfiguration{"ns1": "a\n---x\n"}, ""},
			// A JSON stream is read value by value; one that stops parsing
			// ends there (upstream's reader retries it forever).
			{"JSON stream", head + "plugins:\n- name: PodNodeSelector\n  path: stream.json\n",
				PodNodeSelectorConfiguration{"ns1": "z", "ns2": "", "ns3": "c"}, ""},
			{"neither", "kind: Config\nother: {}\n", nil,
				`no kind "Config" is registered for version "": want kind AdmissionConfiguration in ` + strings.Join(AdmissionConfigAPIVersions(b), " or ")},
		}
		for _, tc := range tests {
			t.Run(brandName+"/"+tc.name, func(t *testing.T) {
				got, ok := decodeAdmissionCase(t, tc.in, dir, b, AdmissionPluginsOff{PluginEventRateLimit: true, PluginImagePolicyWebhook: true}, tc.err)
				if !ok {
					return
				}
				if !reflect.DeepEqual(got.PodNodeSelector, tc.want) {
					t.Errorf("got %#v\nwant %#v", got.PodNodeSelector, tc.want)
				}
				if got.PodNodeSelector != nil && got.PodNodeSelector.ClusterDefault() != tc.want["clusterDefaultNodeSelector"] {
					t.Errorf("ClusterDefault %q", got.PodNodeSelector.ClusterDefault())
				}
			})
		}
	}
}
