package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeAdmissionConfig(t *testing.T) {
	for _, brandName := range BrandNames() {
		b := Brands[brandName]
		head := "apiVersion: " + AdmissionConfigAPIVersions(b)[0] + "\nkind: AdmissionConfiguration\n"
		psHead := func(version string) string {
			return "apiVersion: " + b.Group("pod-security.admission.config") + "/" + version + "\n      kind: PodSecurityConfiguration\n"
		}
		inline := func(body string) string {
			return head + "plugins:\n- name: PodSecurity\n  configuration:\n      " + psHead("v1") + body
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "ps.yaml"), []byte(strings.ReplaceAll(psHead("v1beta1"), "      ", "")+"defaults:\n  audit: baseline\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		defaults := PodSecurityDefaults{Enforce: "privileged", EnforceVersion: "latest", Audit: "privileged", AuditVersion: "latest", Warn: "privileged", WarnVersion: "latest"}
		withDefaults := func(f func(*PodSecurityConfiguration)) PodSecurityConfiguration {
			c := PodSecurityConfiguration{Defaults: defaults}
			if f != nil {
				f(&c)
			}
			return c
		}
		tests := []struct {
			name string
			in   string
			want PodSecurityConfiguration
			err  string // the whole error text; "" for success
		}{
			{"no file", "", withDefaults(nil), ""},
			{"no plugins", head, withDefaults(nil), ""},
			{"other plugins ignored", head + "plugins:\n- name: EventRateLimit\n  path: missing.yaml\n- name: ImagePolicyWebhook\n  configuration: {imagePolicy: {}}\n", withDefaults(nil), ""},
			{"v1alpha1 file, unknown field ignored", "apiVersion: " + AdmissionConfigAPIVersions(b)[1] + "\nkind: AdmissionConfiguration\nextra: 1\nplugins:\n- name: PodSecurity\n", withDefaults(nil), ""},
			{"legacy unversioned file", "imagePolicy:\n  kubeConfigFile: x\n", withDefaults(nil), ""},
			{"inline", inline("      defaults:\n        enforce: baseline\n        enforce-version: v1.30\n        warn: restricted\n      exemptions:\n        usernames: [ci]\n        namespaces: [tools]\n        runtimeClasses: [kata.io]\n"),
				withDefaults(func(c *PodSecurityConfiguration) {
					c.Defaults.Enforce, c.Defaults.EnforceVersion, c.Defaults.Warn = "baseline", "v1.30", "restricted"
					c.Exemptions = PodSecurityExemptions{Usernames: []string{"ci"}, Namespaces: []string{"tools"}, RuntimeClasses: []string{"kata.io"}}
				}), ""},
			{"relative path", head + "plugins:\n- name: PodSecurity\n  path: ps.yaml\n", withDefaults(func(c *PodSecurityConfiguration) { c.Defaults.Audit = "baseline" }), ""},
			{"inline beats path", head + "plugins:\n- name: PodSecurity\n  path: missing.yaml\n  configuration:\n      " + psHead("v1") + "      defaults: {warn: baseline}\n",
				withDefaults(func(c *PodSecurityConfiguration) { c.Defaults.Warn = "baseline" }), ""},
			{"first entry wins", head + "plugins:\n- name: PodSecurity\n  path: ps.yaml\n- name: PodSecurity\n  path: missing.yaml\n",
				withDefaults(func(c *PodSecurityConfiguration) { c.Defaults.Audit = "baseline" }), ""},
			{"missing path", head + "plugins:\n- name: PodSecurity\n  path: missing.yaml\n", PodSecurityConfiguration{},
				"couldn't open admission plugin configuration " + filepath.Join(dir, "missing.yaml") + ": open " + filepath.Join(dir, "missing.yaml") + ": no such file or directory"},
			{"wrong kind", strings.Replace(head, "AdmissionConfiguration", "Admission", 1), PodSecurityConfiguration{},
				`no kind "Admission" is registered for version "` + AdmissionConfigAPIVersions(b)[0] + `": want kind AdmissionConfiguration in ` + strings.Join(AdmissionConfigAPIVersions(b), " or ")},
			{"plugin unknown field", inline("      default: {}\n"), PodSecurityConfiguration{},
				`couldn't init admission plugin "PodSecurity": strict decoding error: unknown field "default"`},
			{"plugin wrong kind", head + "plugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: v1\n    kind: PodSecurityConfiguration\n", PodSecurityConfiguration{},
				`couldn't init admission plugin "PodSecurity": no kind "PodSecurityConfiguration" is registered for version "v1": want kind PodSecurityConfiguration in ` + strings.Join(PodSecurityConfigAPIVersions(b), " or ")},
			{"bad level", inline("      defaults: {enforce: strict}\n"), PodSecurityConfiguration{},
				`couldn't init admission plugin "PodSecurity": PodSecurity configuration error: Enforce.Level: must be one of privileged, baseline, restricted`},
			{"bad levels and versions", inline("      defaults: {audit-version: '1.30', warn: none, warn-version: v1.01}\n"), PodSecurityConfiguration{},
				`couldn't init admission plugin "PodSecurity": PodSecurity configuration error: [Audit.Version: must be "latest" or "v1.x", Warn.Level: must be one of privileged, baseline, restricted, Warn.Version: must be "latest" or "v1.x"]`},
			{"bad exemptions", inline("      exemptions:\n        namespaces: [ok, Bad, a.b, ok]\n        runtimeClasses: [kata.io, kata.io, '-x']\n        usernames: ['', u, u]\n"), PodSecurityConfiguration{},
				`couldn't init admission plugin "PodSecurity": PodSecurity invalid: [` +
					`exemptions.namespaces[1]: Invalid value: "Bad": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), ` +
					`exemptions.namespaces[2]: Invalid value: "a.b": must not contain dots, ` +
					`exemptions.namespaces[3]: Duplicate value: "ok", ` +
					`exemptions.runtimeClasses[1]: Duplicate value: "kata.io", ` +
					`exemptions.runtimeClasses[2]: Invalid value: "-x": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), ` +
					`exemptions.usernames[0]: Required value, ` +
					`exemptions.usernames[2]: Duplicate value: "u"]`},
		}
		for _, tc := range tests {
			t.Run(brandName+"/"+tc.name, func(t *testing.T) {
				got, ok := decodeAdmissionCase(t, tc.in, dir, b, nil, tc.err)
				if !ok {
					return
				}
				if !reflect.DeepEqual(got.PodSecurity, tc.want) {
					t.Errorf("got %+v\nwant %+v", got.PodSecurity, tc.want)
				}
			})
		}
	}
}

// The entry of a plugin that does not run is not read, as upstream
// initializes only the plugins it runs: a bad configuration or a missing
// file of a disabled plugin does not stop platd.
func TestDecodeAdmissionConfigPluginsOff(t *testing.T) {
	b := Brands["plat"]
	head := "apiVersion: " + AdmissionConfigAPIVersions(b)[0] + "\nkind: AdmissionConfiguration\nplugins:\n"
	bad := head + "- name: PodSecurity\n  configuration:\n    apiVersion: " + PodSecurityConfigAPIVersions(b)[0] +
		"\n    kind: PodSecurityConfiguration\n    defaults: {enforce: strict}\n"
	missing := head + "- name: PodSecurity\n  path: missing.yaml\n"
	podSecurityOff, _ := parseAdmissionPlugins(nil, []string{PluginPodSecurity})
	for _, tc := range []struct {
		name, in string
		off      AdmissionPluginsOff
		err      string // a part of the error; "" for success
	}{
		{"bad configuration, plugin runs", bad, nil, "Enforce.Level: must be one of"},
		{"bad configuration, plugin off", bad, podSecurityOff, ""},
		{"missing path, plugin runs", missing, nil, "couldn't open admission plugin configuration"},
		{"missing path, plugin off", missing, podSecurityOff, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeAdmissionConfig([]byte(tc.in), t.TempDir(), b, tc.off)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, AdmissionPlugins{}) {
				t.Errorf("got %+v, want no configuration of the plugin that does not run", got)
			}
		})
	}
}

// The flag's file is read by Validate; a bad one is an ErrInvalid naming
// the flag and the file.
func TestAdmissionControlConfigFileOption(t *testing.T) {
	b := Brands["plat"]
	dir := t.TempDir()
	good := filepath.Join(dir, "admission.yaml")
	body := "apiVersion: " + AdmissionConfigAPIVersions(b)[0] + "\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: " +
		PodSecurityConfigAPIVersions(b)[0] + "\n    kind: PodSecurityConfiguration\n    defaults: {enforce: restricted}\n"
	if err := os.WriteFile(good, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := LoadAdmissionConfig(good, b, nil)
	if err != nil || a.PodSecurity.Defaults.Enforce != "restricted" {
		t.Fatalf("load: %v %+v", err, a)
	}
	missing := filepath.Join(dir, "missing.yaml")
	_, err = LoadAdmissionConfig(missing, b, nil)
	if !errors.Is(err, ErrAdmissionConfig) || !strings.Contains(err.Error(), `unable to read admission control configuration from "`+missing+`"`) {
		t.Errorf("missing file: %v", err)
	}
}

// decodeAdmissionCase decodes in (no file when empty) as an admission
// configuration in dir with the plugins of off not running. When wantErr
// is set it checks the error is that and reports false; otherwise it
// fails on any error and returns the configurations to compare.
func decodeAdmissionCase(t *testing.T, in, dir string, b Brand, off AdmissionPluginsOff, wantErr string) (AdmissionPlugins, bool) {
	t.Helper()
	var data []byte
	if in != "" {
		data = []byte(in)
	}
	got, err := DecodeAdmissionConfig(data, dir, b, off)
	if wantErr != "" {
		if err == nil || err.Error() != wantErr {
			t.Fatalf("error:\n got %v\nwant %s", err, wantErr)
		}
		return got, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return got, true
}
