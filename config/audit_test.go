package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseAuditPolicy(t *testing.T) {
	t.Parallel()
	b := Brands["plat"]
	head := "apiVersion: audit.DOMAIN/v1\nkind: Policy\n"
	cases := []struct {
		name, in string
		// err is the whole error text; "" means valid.
		err  string
		warn string
	}{
		{"levels and selectors", head + `omitStages: [RequestReceived]
rules:
- level: None
  users: [system:kube-proxy]
  verbs: [watch]
  resources: [{group: "", resources: [endpoints, services, "services/status"]}]
- level: Metadata
  namespaces: [""]
- level: Request
  userGroups: [system:nodes]
  resources: [{group: apps, resources: ["*/status"], resourceNames: [a]}]
- level: RequestResponse
  nonResourceURLs: ["/healthz*", "*"]
  omitStages: [Panic]
  omitManagedFields: true
`, "", ""},
		{"json", `{"apiVersion":"audit.DOMAIN/v1","kind":"Policy","rules":[{"level":"Metadata"}]}`, "", ""},
		{"no rules", head, "loaded illegal policy with 0 rules", ""},
		{"empty", "", "failed decoding: Object 'Kind' is missing in 'null'", ""},
		{"upstream spelling in the plat brand", "apiVersion: audit.UPSTREAM/v1\nkind: Policy\nrules: [{level: None}]",
			`failed decoding: no kind "Policy" is registered for version "audit.UPSTREAM/v1"`, ""},
		{"old version", "apiVersion: audit.DOMAIN/v1beta1\nkind: Policy\nrules: [{level: None}]",
			`failed decoding: no kind "Policy" is registered for version "audit.DOMAIN/v1beta1"`, ""},
		{"missing level", head + "rules: [{verbs: [get]}]", "rules[0].level: Required value", ""},
		{"bad level", head + "rules: [{level: All}]",
			`rules[0].level: Unsupported value: "All": supported values: "None", "Metadata", "Request", "RequestResponse"`, ""},
		{"bad stage", head + "omitStages: [Done]\nrules: [{level: None, omitStages: [ResponseComplete, Later]}]",
			`[omitStages[0]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic, rules[0].omitStages[1]: Invalid value: "Later": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic]`, ""},
		{"url without slash", head + "rules: [{level: None, nonResourceURLs: [healthz]}]",
			`rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a '/' character`, ""},
		{"inner wildcard", head + "rules: [{level: None, nonResourceURLs: ['/a*/b']}]",
			`rules[0].nonResourceURLs[0]: Invalid value: "/a*/b": non-resource URL wildcards '*' must be the final character of the rule`, ""},
		{"both kinds", head + "rules: [{level: None, namespaces: [a], nonResourceURLs: ['/x']}]",
			`rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and non-resource URLs`, ""},
		{"group with version", head + "rules: [{level: None, resources: [{group: apps/v1}]}]",
			`rules[0].resources.group: Invalid value: "apps/v1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`, ""},
		{"names without resources", head + "rules: [{level: None, resources: [{resourceNames: [x]}]}]",
			`rules[0].resources.resourceNames: Invalid value: []string{"x"}: using resourceNames requires at least one resource`, ""},
		{"unknown field warns", head + "rules: [{level: None, user: [x]}]", "",
			`Audit policy contains errors, falling back to lenient decoding: strict decoding error: unknown field "rules[0].user"`},
		{"wrong type", head + "rules: [{level: [None]}]", "failed decoding: ", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in, c.err = branded(c.in), branded(c.err)
			p, warns, err := ParseAuditPolicy([]byte(c.in), b)
			if c.err == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if p == nil || len(p.Rules) == 0 {
					t.Fatalf("no rules decoded")
				}
			} else if err == nil || !(err.Error() == c.err || strings.HasSuffix(c.err, ": ") && strings.HasPrefix(err.Error(), c.err)) {
				t.Fatalf("error:\n got %v\nwant %s", err, c.err)
			}
			if got := strings.Join(warns, "\n"); got != c.warn {
				t.Errorf("warnings:\n got %q\nwant %q", got, c.warn)
			}
		})
	}
}

func TestParseAuditPolicyFields(t *testing.T) {
	t.Parallel()
	p, _, err := ParseAuditPolicy([]byte(branded(`apiVersion: audit.UPSTREAM/v1
kind: Policy
omitManagedFields: true
rules:
- level: Request
  omitManagedFields: false
  resources: [{group: "", resources: [pods], resourceNames: [p1]}]
`)), Brands["kubernetes"])
	if err != nil {
		t.Fatal(err)
	}
	r := p.Rules[0]
	if !p.OmitManagedFields || r.OmitManagedFields == nil || *r.OmitManagedFields || r.Resources[0].ResourceNames[0] != "p1" {
		t.Errorf("decoded %+v", p)
	}
}

func TestLoadAuditPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(path, []byte(branded("apiVersion: audit.DOMAIN/v1\nkind: Policy\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadAuditPolicy(path, Brands["plat"])
	if want := "invalid audit policy: loaded illegal policy with 0 rules: from file " + path; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	missing := filepath.Join(dir, "none.yaml")
	if _, _, err := LoadAuditPolicy(missing, Brands["plat"]); err == nil || !strings.HasPrefix(err.Error(), `failed to read file path "`+missing+`": open `) {
		t.Errorf("missing file: %v", err)
	}
}

func TestAuditLogValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a    AuditLog
		want string
	}{
		{AuditLog{Format: "json"}, ""},
		{AuditLog{}, ""},
		{AuditLog{MaxAge: -1, MaxBackup: -2, MaxSize: -3, Format: "json"},
			"--audit-log-maxage -1 can't be a negative number; --audit-log-maxbackup -2 can't be a negative number; --audit-log-maxsize -3 can't be a negative number"},
		{AuditLog{Format: "legacy"}, "--audit-log-format=legacy is not supported by platd: use --audit-log-format=json"},
		{AuditLog{Format: "xml"}, `invalid audit log format xml, allowed formats are "json,legacy"`},
	}
	for _, c := range cases {
		if got := strings.Join(c.a.validate(), "; "); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.a, got, c.want)
		}
	}
	if (AuditLog{PolicyFile: "p"}).Enabled() || (AuditLog{Path: "-"}).Enabled() || !(AuditLog{PolicyFile: "p", Path: "-"}).Enabled() {
		t.Error("audit must be on only with both a policy and a path")
	}
}

func FuzzParseAuditPolicy(f *testing.F) {
	f.Add([]byte(branded("apiVersion: audit.DOMAIN/v1\nkind: Policy\nrules: [{level: Metadata, resources: [{group: apps, resources: ['*']}]}]")))
	f.Add([]byte(branded(`{"apiVersion":"audit.DOMAIN/v1","kind":"Policy","omitStages":["Panic"],"rules":[{"level":"None","nonResourceURLs":["/a*"]}]}`)))
	f.Add([]byte("rules: [{level: 3}]"))
	b := Brands["plat"]
	f.Fuzz(func(t *testing.T, data []byte) {
		p, _, err := ParseAuditPolicy(data, b)
		if err == nil && (p == nil || len(p.Rules) == 0 || len(p.Validate()) > 0) {
			t.Fatalf("accepted an unusable policy: %+v", p)
		}
	})
}

// branded spells DOMAIN as the plat brand's domain and UPSTREAM as the
// upstream one.
func branded(s string) string {
	return strings.NewReplacer("DOMAIN", Brands["plat"].Domain, "UPSTREAM", UpstreamDomain()).Replace(s)
}
