package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The EventRateLimit entry is decoded leniently and validated with
// upstream's messages; the plugin has no default configuration, so when
// it runs a file without its entry stops platd, and when it does not its
// entry is not read.
func TestDecodeEventRateLimitConfig(t *testing.T) {
	t.Parallel()
	on, _ := parseAdmissionPlugins([]string{PluginEventRateLimit}, nil)
	for _, brandName := range BrandNames() {
		b := Brands[brandName]
		head := "apiVersion: " + AdmissionConfigAPIVersions(b)[0] + "\nkind: AdmissionConfiguration\n"
		ercHead := func(apiVersion, kind string) string {
			return "apiVersion: " + apiVersion + "\n      kind: " + kind + "\n"
		}
		inline := func(body string) string {
			return head + "plugins:\n- name: EventRateLimit\n  configuration:\n      " +
				ercHead(EventRateLimitConfigAPIVersions(b)[0], "Configuration") + body
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "erl.yaml"), []byte("apiVersion: "+EventRateLimitConfigAPIVersions(b)[0]+
			"\nkind: Configuration\nlimits:\n- {type: User, qps: 3, burst: 10, cacheSize: 7}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		const prefix = `couldn't init admission plugin "EventRateLimit": `
		tests := []struct {
			name string
			in   string
			off  AdmissionPluginsOff
			want *EventRateLimitConfiguration
			err  string // the whole error text; "" for success
		}{
			{name: "every type, cache sizes defaulted but for Server", off: on,
				in: inline("      limits:\n      - {type: Server, qps: 50, burst: 100}\n      - {type: Namespace, qps: 5, burst: 10, cacheSize: 2000}\n" +
					"      - {type: User, qps: 1, burst: 2}\n      - {type: SourceAndObject, qps: 1, burst: 1}\n"),
				want: &EventRateLimitConfiguration{Limits: []EventRateLimit{
					{Type: "Server", QPS: 50, Burst: 100}, {Type: "Namespace", QPS: 5, Burst: 10, CacheSize: 2000},
					{Type: "User", QPS: 1, Burst: 2, CacheSize: 4096}, {Type: "SourceAndObject", QPS: 1, Burst: 1, CacheSize: 4096}}}},
			{name: "from a relative path", off: on, in: head + "plugins:\n- name: EventRateLimit\n  path: erl.yaml\n",
				want: &EventRateLimitConfiguration{Limits: []EventRateLimit{{Type: "User", QPS: 3, Burst: 10, CacheSize: 7}}}},
			{name: "unknown fields ignored", off: on, in: inline("      extra: 1\n      limits:\n      - {type: Server, qps: 1, burst: 1, window: 5}\n"),
				want: &EventRateLimitConfiguration{Limits: []EventRateLimit{{Type: "Server", QPS: 1, Burst: 1}}}},
			{name: "Server's negative cache size is not looked at", off: on, in: inline("      limits:\n      - {type: Server, qps: 1, burst: 1, cacheSize: -1}\n"),
				want: &EventRateLimitConfiguration{Limits: []EventRateLimit{{Type: "Server", QPS: 1, Burst: 1, CacheSize: -1}}}},
			{name: "plugin off: entry not read", off: nil, in: head + "plugins:\n- name: EventRateLimit\n  path: missing.yaml\n"},
			{name: "plugin off: bad entry not read", off: nil, in: inline("      limits: []\n")},
			{name: "no file", off: on, err: prefix + "limits: Invalid value: []eventratelimit.Limit(nil): must not be empty"},
			{name: "no entry", off: on, in: head + "plugins:\n- name: PodSecurity\n",
				err: prefix + "limits: Invalid value: []eventratelimit.Limit(nil): must not be empty"},
			{name: "no limits", off: on, in: inline(""), err: prefix + "limits: Invalid value: []eventratelimit.Limit(nil): must not be empty"},
			{name: "empty limits", off: on, in: inline("      limits: []\n"), err: prefix + "limits: Invalid value: []eventratelimit.Limit{}: must not be empty"},
			{name: "bad limits", off: on,
				in: inline("      limits:\n      - {type: Cluster, qps: 0, burst: -1, cacheSize: -2}\n      - {type: Namespace, qps: 1, burst: 1, cacheSize: -1}\n"),
				err: prefix + `[limits[0].type: Unsupported value: "Cluster": supported values: "Server", "Namespace", "User", "SourceAndObject", ` +
					`limits[0].burst: Invalid value: -1: must be positive, limits[0].qps: Invalid value: 0: must be positive, ` +
					`limits[0].cacheSize: Invalid value: -2: must not be negative, limits[1].cacheSize: Invalid value: -1: must not be negative]`},
			{name: "wrong kind", off: on, in: head + "plugins:\n- name: EventRateLimit\n  configuration:\n      " + ercHead(EventRateLimitConfigAPIVersions(b)[0], "EventRateLimitConfiguration"),
				err: prefix + `no kind "EventRateLimitConfiguration" is registered for version "` + EventRateLimitConfigAPIVersions(b)[0] + `": want kind Configuration in ` + EventRateLimitConfigAPIVersions(b)[0]},
			{name: "wrong group", off: on, in: head + "plugins:\n- name: EventRateLimit\n  configuration:\n      " + ercHead("eventratelimit.admission/v1alpha1", "Configuration"),
				err: prefix + `no kind "Configuration" is registered for version "eventratelimit.admission/v1alpha1": want kind Configuration in ` + EventRateLimitConfigAPIVersions(b)[0]},
			{name: "missing path", off: on, in: head + "plugins:\n- name: EventRateLimit\n  path: missing.yaml\n",
				err: "couldn't open admission plugin configuration " + filepath.Join(dir, "missing.yaml") + ": open " + filepath.Join(dir, "missing.yaml") + ": no such file or directory"},
		}
		for _, tc := range tests {
			t.Run(brandName+"/"+tc.name, func(t *testing.T) {
				got, ok := decodeAdmissionCase(t, tc.in, dir, b, tc.off, tc.err)
				if !ok {
					return
				}
				if !reflect.DeepEqual(got.EventRateLimit, tc.want) {
					t.Errorf("got %+v\nwant %+v", got.EventRateLimit, tc.want)
				}
			})
		}
	}
}

// Validate reads the admission configuration without the flag too: the
// plugin that runs without its configuration is an ErrInvalid.
func TestEventRateLimitOption(t *testing.T) {
	t.Parallel()
	b := Brands["plat"]
	file := filepath.Join(t.TempDir(), "admission.yaml")
	body := "apiVersion: " + AdmissionConfigAPIVersions(b)[1] + "\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  configuration:\n    apiVersion: " +
		EventRateLimitConfigAPIVersions(b)[0] + "\n    kind: Configuration\n    limits: [{type: Namespace, qps: 2, burst: 4}]\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file string
		want       *EventRateLimitConfiguration
		err        string
	}{
		{name: "with the file", file: file, want: &EventRateLimitConfiguration{Limits: []EventRateLimit{{Type: "Namespace", QPS: 2, Burst: 4, CacheSize: 4096}}}},
		{name: "without", err: `--admission-control-config-file: invalid admission control configuration: couldn't init admission plugin "EventRateLimit": limits: Invalid value: []eventratelimit.Limit(nil): must not be empty`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{DataDir: "d", BindAddress: "127.0.0.1", AuthorizationModes: []string{ModeAlwaysAllow}, HistoryRetention: 1, Brand: b,
				EnableAdmissionPlugins: []string{PluginEventRateLimit}, AdmissionControlConfigFile: tc.file}
			err := o.Validate()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(o.Admission.EventRateLimit, tc.want) {
				t.Errorf("got %+v, want %+v", o.Admission.EventRateLimit, tc.want)
			}
		})
	}
}
