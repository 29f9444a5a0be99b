package config

import (
	"fmt"
	"reflect"
	"testing"
)

// FuzzAdmissionConfig feeds arbitrary files to the admission
// configuration decoder, with every plugin running, and arbitrary plugin
// configurations to each plugin's decoder: each answers a configuration
// or an error, never a panic, and the same for the same input. A decoded
// configuration holds what its plugin needs: EventRateLimit's limits have
// rates and bursts above zero, ImagePolicyWebhook's a backend.
func FuzzAdmissionConfig(f *testing.F) {
	b := Brands["plat"]
	head := "apiVersion: " + AdmissionConfigAPIVersions(b)[0] + "\nkind: AdmissionConfiguration\nplugins:\n"
	entry := func(name, apiVersion, kind, body string) string {
		return head + "- name: " + name + "\n  configuration:\n    apiVersion: " + apiVersion + "\n    kind: " + kind + "\n" + body
	}
	f.Add([]byte(entry(PluginEventRateLimit, EventRateLimitConfigAPIVersions(b)[0], "Configuration",
		"    limits:\n    - {type: Server, qps: 50, burst: 100}\n    - {type: SourceAndObject, qps: 1, burst: 1, cacheSize: 3}\n")))
	f.Add([]byte(entry(PluginPodSecurity, PodSecurityConfigAPIVersions(b)[0], "PodSecurityConfiguration",
		"    defaults: {enforce: baseline, enforce-version: v1.30}\n    exemptions: {usernames: [ci], runtimeClasses: [kata]}\n")))
	f.Add([]byte(entry(PluginPodTolerationRestriction, PodTolerationRestrictionConfigAPIVersions(b)[0], "Configuration",
		"    default:\n    - {key: a, operator: Equal, value: b}\n    whitelist:\n    - {operator: Exists, effect: NoExecute, tolerationSeconds: 30}\n")))
	f.Add([]byte(head + "- name: ImagePolicyWebhook\n  configuration:\n    imagePolicy: {kubeConfigFile: missing, allowTTL: 50, retryBackoff: -1}\n"))
	f.Add([]byte(head + "- name: PodNodeSelector\n  path: missing.yaml\n"))
	f.Add([]byte("podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n  ns1: env=dev,tier=web\n"))
	f.Add([]byte(`{"imagePolicy":{"kubeConfigFile":"x","denyTTL":5,"defaultAllow":true}}`))
	f.Add([]byte("---\n- [\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		first, err := DecodeAdmissionConfig(in, dir, b, AdmissionPluginsOff{})
		again, errAgain := DecodeAdmissionConfig(in, dir, b, AdmissionPluginsOff{})
		if fmt.Sprint(err) != fmt.Sprint(errAgain) || !reflect.DeepEqual(first, again) {
			t.Fatalf("decoding twice differs: %v, %+v; then %v, %+v", err, first, errAgain, again)
		}
		if err == nil {
			checkAdmissionPlugins(t, first)
		}
		for _, name := range AdmissionPluginNames {
			decode := admissionPluginDecoders[name]
			if decode == nil {
				continue
			}
			var out AdmissionPlugins
			if err := decode(in, b, &out); err == nil {
				checkAdmissionPlugins(t, out)
			}
		}
	})
}

// checkAdmissionPlugins fails t when a decoded configuration holds what
// its plugin could not use.
func checkAdmissionPlugins(t *testing.T, p AdmissionPlugins) {
	t.Helper()
	if c := p.EventRateLimit; c != nil {
		if len(c.Limits) == 0 {
			t.Fatalf("EventRateLimit decoded without limits")
		}
		for _, l := range c.Limits {
			if l.QPS <= 0 || l.Burst <= 0 || l.CacheSize < 0 {
				t.Fatalf("EventRateLimit decoded an unusable limit %+v", l)
			}
		}
	}
	if c := p.ImagePolicyWebhook; c != nil && c.KubeConfigFile == "" {
		t.Fatalf("ImagePolicyWebhook decoded without a backend: %+v", c)
	}
}
