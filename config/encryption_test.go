package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	key16 = "c2VjcmV0IGlzIHNlY3VyZQ==" // 16 bytes
	key32 = "MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI="
)

func encHead(b Brand) string {
	return "apiVersion: " + EncryptionConfigAPIVersions(b)[0] + "\nkind: EncryptionConfiguration\n"
}

func TestDecodeEncryptionConfig(t *testing.T) {
	b := Brands["kubernetes"]
	head := encHead(b)
	v2 := b.Group("apiserver.config") + "/v2"
	events := "*.events." + b.Domain
	tests := []struct {
		name string
		in   string
		want string // the whole error text; "" for success
	}{
		{"aesgcm", head + "resources:\n- resources: [secrets]\n  providers:\n  - aesgcm: {keys: [{name: key1, secret: " + key16 + "}]}\n  - identity: {}\n", ""},
		{"json", `{"apiVersion":"` + EncryptionConfigAPIVersions(b)[0] + `","kind":"EncryptionConfiguration","resources":[{"resources":["*.*"],"providers":[{"secretbox":{"keys":[{"name":"k","secret":"` + key32 + `"}]}}]}]}`, ""},
		{"empty", "  \n", "encryption provider config is empty"},
		{"wrong version", "apiVersion: " + v2 + "\nkind: EncryptionConfiguration\nresources: []\n",
			`error decoding encryption provider configuration: no kind "EncryptionConfiguration" is registered for version "` + v2 + `": want kind EncryptionConfiguration in ` + EncryptionConfigAPIVersions(b)[0]},
		{"unknown field", head + "resources:\n- resources: [secrets]\n  providers: [{aesgsm: {}}]\n",
			`error decoding encryption provider configuration: strict decoding error: unknown field "resources[0].providers[0].aesgsm"`},
		{"no resources", head + "resources: []\n", "resources: Required value: at least one resources is required"},
		{"empty lists", head + "resources:\n- resources: []\n  providers: []\n",
			"[resources[0].resources: Required value: at least one resources[0].resources is required, resources[0].providers: Required value: at least one resources[0].providers is required]"},
		{"overlap", head + "resources:\n- resources: [secrets, '*.']\n  providers: [{identity: {}}]\n",
			`resources[0].resources: Invalid value: []string{"secrets", "*."}: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked`},
		{"any masks all", head + "resources:\n- resources: ['*.*', deployments.apps]\n  providers: [{identity: {}}]\n",
			`resources[0].resources: Invalid value: []string{"*.*", "deployments.apps"}: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked`},
		{"other groups do not overlap", head + "resources:\n- resources: ['*.apps', secrets, '*.batch']\n  providers: [{identity: {}}]\n", ""},
		{"duplicate", head + "resources:\n- resources: [secrets, secrets]\n  providers: [{identity: {}}]\n",
			`resources[0].resources: Invalid value: []string{"secrets", "secrets"}: the same resource cannot be specified multiple times`},
		{"names", head + "resources:\n- resources: [Secrets, '*', serviceipallocations, '" + events + "', deployments.extensions, 'secrets.*']\n  providers: [{identity: {}}]\n",
			`[resources[0].resources: Invalid value: []string{"Secrets", "*", "serviceipallocations", "` + events + `", "deployments.extensions", "secrets.*"}: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked, ` +
				`resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters, ` +
				`resources[0].resources[1]: Invalid value: "*": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources, ` +
				`resources[0].resources[2]: Invalid value: "serviceipallocations": resources which do not have REST API/s cannot be encrypted, ` +
				`resources[0].resources[3]: Invalid value: "` + events + `": '` + events + `' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file, ` +
				`resources[0].resources[4]: Invalid value: "deployments.extensions": 'extensions' group has been removed and cannot be used for encryption, ` +
				`resources[0].resources[5]: Invalid value: "secrets.*": encrypting the same resource across groups is not supported]`},
		{"no provider", head + "resources:\n- resources: [secrets]\n  providers: [{}]\n",
			`resources[0].providers[0]: Invalid value: config.ProviderConfiguration{AESGCM:(*config.KeysConfiguration)(nil), AESCBC:(*config.KeysConfiguration)(nil), Secretbox:(*config.KeysConfiguration)(nil), Identity:(*config.IdentityConfiguration)(nil), KMS:(*config.KMSConfiguration)(nil)}: provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity`},
		{"two providers", head + "resources:\n- resources: [secrets]\n  providers: [{identity: {}, aesgcm: {keys: [{name: k, secret: " + key16 + "}]}}]\n",
			"more than one provider specified in a single element, should split into different list elements"},
		{"no keys", head + "resources:\n- resources: [secrets]\n  providers: [{aescbc: {keys: []}}]\n",
			"resources[0].providers[0].aescbc.keys: Required value: at least one keys is required"},
		{"key fields", head + "resources:\n- resources: [secrets]\n  providers: [{aesgcm: {keys: [{name: '', secret: ''}, {name: k, secret: '%%%'}, {name: k2, secret: " + key32 + "}]}}, {secretbox: {keys: [{name: s, secret: " + key16 + "}]}}]\n",
			`[resources[0].providers[0].aesgcm.keys[0].name: Required value: name is a mandatory field for a key, ` +
				`resources[0].providers[0].aesgcm.keys[0].secret: Required value: secret is a mandatory field for a key, ` +
				`resources[0].providers[0].aesgcm.keys[1].secret: Invalid value: "REDACTED": secrets must be base64 encoded, ` +
				`resources[0].providers[1].secretbox.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 16, expected one of [32]]`},
		// An earlier list's wildcard masks a later entry it covers.
		{"core wildcard masks", head + "resources:\n- resources: ['*.']\n  providers: [{identity: {}}]\n- resources: [configmaps, secrets]\n  providers: [{identity: {}}]\n",
			`error while building transformers: resource "configmaps" is masked by earlier rule "*."`},
		{"any masks later", head + "resources:\n- resources: ['*.*']\n  providers: [{identity: {}}]\n- resources: [secrets]\n  providers: [{identity: {}}]\n",
			`error while building transformers: resource "secrets" is masked by earlier rule "*.*"`},
		{"group wildcard masks", head + "resources:\n- resources: [secrets, '*.apps']\n  providers: [{identity: {}}]\n- resources: ['*.batch', deployments.apps]\n  providers: [{identity: {}}]\n",
			`error while building transformers: resource "deployments.apps" is masked by earlier rule "*.apps"`},
		{"any twice", head + "resources:\n- resources: ['*.*']\n  providers: [{identity: {}}]\n- resources: ['*.*']\n  providers: [{identity: {}}]\n",
			`error while building transformers: resource "*.*" is masked by earlier rule "*.*"`},
		{"wildcard twice", head + "resources:\n- resources: ['*.apps']\n  providers: [{identity: {}}]\n- resources: ['*.apps']\n  providers: [{identity: {}}]\n",
			`error while building transformers: resource "*.apps" is masked by earlier rule "*.apps"`},
		{"later wildcards mask nothing", head + "resources:\n- resources: [secrets, deployments.apps]\n  providers: [{identity: {}}]\n- resources: [secrets, '*.apps', '*.batch']\n  providers: [{identity: {}}]\n" +
			"- resources: ['*.']\n  providers: [{identity: {}}]\n- resources: ['*.*']\n  providers: [{identity: {}}]\n", ""},
		{"kms refused", head + "resources:\n- resources: [secrets]\n  providers: [{kms: {apiVersion: v2, name: k, endpoint: 'unix:///k.sock', timeout: 3s}}]\n",
			"resources[0].providers[0].kms: Forbidden: KMS providers are not supported by this server; use aesgcm, aescbc or secretbox"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeEncryptionConfig([]byte(tt.in), b)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) || exact(tt.want) && got != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

// exact says a wanted text is the whole error, not a part of it whose rest
// (Go syntax of pointers) varies.
func exact(want string) bool {
	return strings.HasPrefix(want, "[") || strings.HasPrefix(want, "resources") || strings.HasPrefix(want, "error")
}

func TestEncryptionConfigBrand(t *testing.T) {
	b := Brands["plat"]
	in := encHead(b) + "resources:\n- resources: ['*.events." + b.Domain + "']\n  providers: [{identity: {}}]\n"
	_, err := DecodeEncryptionConfig([]byte(in), b)
	if err == nil || !strings.Contains(err.Error(), "'*.events."+b.Domain+"' objects are stored using the 'events' API group") {
		t.Fatalf("got %v", err)
	}
}

func TestProvidersFor(t *testing.T) {
	b := Brands["plat"]
	in := encHead(b) + `resources:
- resources: [secrets, deployments.apps]
  providers:
  - aesgcm: {keys: [{name: new, secret: ` + key32 + `}, {name: old, secret: ` + key16 + `}]}
  - identity: {}
- resources: ['*.apps', configmaps, secrets]
  providers: [{secretbox: {keys: [{name: s, secret: ` + key32 + `}]}}]
- resources: ['*.*']
  providers: [{aescbc: {keys: [{name: c, secret: ` + key16 + `}]}}]
`
	c, err := DecodeEncryptionConfig([]byte(in), b)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		group, resource string
		want            string // first provider type
	}{
		{"", "secrets", ProviderAESGCM},         // the first list naming it writes
		{"apps", "deployments", ProviderAESGCM}, // the resource beats its group's wildcard
		{"apps", "replicasets", ProviderSecretbox},
		{"", "configmaps", ProviderSecretbox},
		{"example.com", "widgets", ProviderAESCBC},
		{"", "pods", ProviderAESCBC},
	}
	for _, tt := range tests {
		ps, ok := c.ProvidersFor(tt.group, tt.resource)
		if !ok || ps[0].Type != tt.want {
			t.Errorf("%s.%s: got %v %v, want %s", tt.resource, tt.group, ps, ok, tt.want)
		}
	}
	// Every list naming secrets gives it its providers, in order.
	ps, _ := c.ProvidersFor("", "secrets")
	if len(ps) != 3 || len(ps[0].Keys) != 2 || ps[0].Keys[1].Name != "old" || len(ps[0].Keys[1].Secret) != 16 || ps[1].Type != ProviderIdentity ||
		ps[2].Type != ProviderSecretbox || ps[2].Keys[0].Name != "s" {
		t.Errorf("providers of secrets: %+v", ps)
	}
	if ps, _ := c.ProvidersFor("", "configmaps"); len(ps) != 1 {
		t.Errorf("providers of configmaps: %+v", ps)
	}
	one, _ := DecodeEncryptionConfig([]byte(encHead(b)+"resources:\n- resources: [secrets]\n  providers: [{identity: {}}]\n"), b)
	if _, ok := one.ProvidersFor("", "configmaps"); ok {
		t.Error("configmaps covered by a file naming only secrets")
	}
}

func TestLoadEncryptionConfig(t *testing.T) {
	b := Brands["plat"]
	if _, err := LoadEncryptionConfig(filepath.Join(t.TempDir(), "missing"), b); err == nil || !strings.Contains(err.Error(), "error opening encryption provider configuration file") {
		t.Errorf("missing file: %v", err)
	}
	p := filepath.Join(t.TempDir(), "enc.yaml")
	if err := os.WriteFile(p, []byte(encHead(b)+"resources: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadEncryptionConfig(p, b); err == nil || !strings.Contains(err.Error(), p+": resources: Required value") {
		t.Errorf("invalid file: %v", err)
	}
}

func FuzzEncryptionConfig(f *testing.F) {
	b := Brands["plat"]
	head := encHead(b)
	f.Add(head + "resources:\n- resources: [secrets, '*.apps']\n  providers:\n  - aesgcm: {keys: [{name: key1, secret: " + key16 + "}]}\n  - identity: {}\n")
	f.Add(head + "resources:\n- resources: ['*.*', x]\n  providers: [{kms: {name: a}}, {}, {identity: {}, secretbox: {keys: [{secret: '%'}]}}]\n")
	f.Add("{}")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := DecodeEncryptionConfig([]byte(in), b)
		if err != nil {
			return
		}
		for _, rc := range c.Resources {
			for _, r := range rc.Resources {
				g, res := GroupResource(r)
				ps, ok := c.ProvidersFor(g, res)
				if !ok || len(ps) == 0 {
					t.Fatalf("%q listed but not covered", r)
				}
				for _, p := range ps {
					if p.Type != ProviderIdentity && len(p.Keys) == 0 {
						t.Fatalf("%s without keys", p.Type)
					}
				}
			}
		}
	})
}
