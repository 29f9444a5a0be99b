package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// EncryptionConfigurationKind is the kind of the --encryption-provider-config
// file.
const EncryptionConfigurationKind = "EncryptionConfiguration"

// ErrEncryptionConfig marks every problem of the encryption provider
// configuration file.
var ErrEncryptionConfig = errors.New("encryption provider config")

// Provider types of an EncryptionConfiguration, as their field names.
const (
	ProviderAESGCM    = "aesgcm"
	ProviderAESCBC    = "aescbc"
	ProviderSecretbox = "secretbox"
	ProviderIdentity  = "identity"
	ProviderKMS       = "kms"
)

// EncryptionConfiguration is the --encryption-provider-config file: which
// resources are encrypted in the data file, and with which providers.
type EncryptionConfiguration struct {
	APIVersion string                  `json:"apiVersion"`
	Kind       string                  `json:"kind"`
	Resources  []ResourceConfiguration `json:"resources"`
}

// ResourceConfiguration is one list of resources with its providers. The
// first provider encrypts writes; every provider is tried for reads.
type ResourceConfiguration struct {
	Resources []string                `json:"resources"`
	Providers []ProviderConfiguration `json:"providers"`
}

// ProviderConfiguration holds exactly one provider.
type ProviderConfiguration struct {
	AESGCM    *KeysConfiguration     `json:"aesgcm,omitempty"`
	AESCBC    *KeysConfiguration     `json:"aescbc,omitempty"`
	Secretbox *KeysConfiguration     `json:"secretbox,omitempty"`
	Identity  *IdentityConfiguration `json:"identity,omitempty"`
	KMS       *KMSConfiguration      `json:"kms,omitempty"`
}

// KeysConfiguration lists a provider's keys; the first encrypts.
type KeysConfiguration struct {
	Keys []EncryptionKey `json:"keys"`
}

// EncryptionKey is a named key; Secret is base64 in the file.
type EncryptionKey struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
}

// IdentityConfiguration is the identity provider: values stay plain.
type IdentityConfiguration struct{}

// KMSConfiguration is accepted by the decoder so a file written for
// upstream reads, and then refused: platd talks to no KMS plugin.
type KMSConfiguration struct {
	APIVersion string    `json:"apiVersion,omitempty"`
	Name       string    `json:"name"`
	Endpoint   string    `json:"endpoint"`
	CacheSize  *int32    `json:"cachesize,omitempty"`
	Timeout    *Duration `json:"timeout,omitempty"`
}

// Provider is one validated provider: its type and decoded keys (none for
// identity), in the file's order.
type Provider struct {
	Type string
	Keys []ProviderKey
}

// ProviderKey is a decoded key. Secret is owned by the Provider.
type ProviderKey struct {
	Name   string
	Secret []byte
}

// EncryptionConfigAPIVersions lists the apiVersions the file may declare.
func EncryptionConfigAPIVersions(b Brand) []string {
	return []string{b.Group("apiserver.config") + "/v1"}
}

// LoadEncryptionConfig reads, decodes and validates path.
func LoadEncryptionConfig(path string, b Brand) (*EncryptionConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: error opening encryption provider configuration file %q: %w", ErrEncryptionConfig, path, err)
	}
	c, err := DecodeEncryptionConfig(data, b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrEncryptionConfig, path, err)
	}
	return c, nil
}

// DecodeEncryptionConfig decodes YAML or JSON strictly and validates the
// result with upstream's rules and messages.
func DecodeEncryptionConfig(data []byte, b Brand) (*EncryptionConfiguration, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, errors.New("encryption provider config is empty")
	}
	var c EncryptionConfiguration
	if err := decodeStrict(data, &c, EncryptionConfigurationKind, EncryptionConfigAPIVersions(b)); err != nil {
		return nil, fmt.Errorf("error decoding encryption provider configuration: %w", err)
	}
	if errs := ValidateEncryptionConfig(&c, b); len(errs) > 0 {
		return nil, errs
	}
	if err := maskedResource(&c); err != nil {
		return nil, fmt.Errorf("error while building transformers: %w", err)
	}
	return &c, nil
}

// maskedResource refuses, as upstream does when it builds the
// transformers, an entry that an earlier entry's wildcard already covers:
// "*.<group>" (or "*." for the core group) before any resource of the
// group, "*.*" before anything. The entry would never be used. Within one
// list validation has refused such overlaps already.
func maskedResource(c *EncryptionConfiguration) error {
	type gr struct{ g, r string }
	seen := map[gr]bool{}
	for _, rc := range c.Resources {
		for _, s := range rc.Resources {
			g, r := GroupResource(s)
			for _, w := range []gr{{g, "*"}, {"*", "*"}} {
				if seen[w] {
					return fmt.Errorf("resource %q is masked by earlier rule %q", resourceString(g, r), resourceString(w.g, w.r))
				}
			}
			seen[gr{g, r}] = true
		}
	}
	return nil
}

// resourceString spells a group and resource as the file does: "secrets",
// "deployments.apps", "*.apps", "*." for the core group's wildcard.
func resourceString(group, resource string) string {
	switch {
	case group == "" && resource == "*":
		return "*."
	case group == "":
		return resource
	}
	return resource + "." + group
}

// Key lengths the providers accept, in bytes.
var (
	aesKeySizes       = []int{16, 24, 32}
	secretboxKeySizes = []int{32}
)

// goValue prints a value as Go syntax, as upstream's field errors print
// lists.
type goValue struct{ v any }

func (g goValue) String() string { return fmt.Sprintf("%#v", g.v) }

// ValidateEncryptionConfig checks c with upstream's rules and messages.
func ValidateEncryptionConfig(c *EncryptionConfiguration, b Brand) FieldErrors {
	var errs FieldErrors
	if len(c.Resources) == 0 {
		return append(errs, required("resources", "at least one resources is required"))
	}
	for i, rc := range c.Resources {
		r := fmt.Sprintf("resources[%d].resources", i)
		p := fmt.Sprintf("resources[%d].providers", i)
		if len(rc.Resources) == 0 {
			errs = append(errs, required(r, "at least one "+r+" is required"))
		}
		errs = append(errs, resourceOverlap(rc.Resources, r)...)
		errs = append(errs, resourceNames(rc.Resources, r, b)...)
		if len(rc.Providers) == 0 {
			errs = append(errs, required(p, "at least one "+p+" is required"))
		}
		for j, pc := range rc.Providers {
			path := fmt.Sprintf("%s[%d]", p, j)
			if e := singleProvider(pc, path); e != nil {
				errs = append(errs, e)
				continue
			}
			switch {
			case pc.KMS != nil:
				errs = append(errs, &FieldError{Type: FieldForbidden, Field: path + ".kms",
					Detail: "KMS providers are not supported by this server; use aesgcm, aescbc or secretbox"})
			case pc.AESGCM != nil:
				errs = append(errs, validateKeys(pc.AESGCM.Keys, path+".aesgcm.keys", aesKeySizes)...)
			case pc.AESCBC != nil:
				errs = append(errs, validateKeys(pc.AESCBC.Keys, path+".aescbc.keys", aesKeySizes)...)
			case pc.Secretbox != nil:
				errs = append(errs, validateKeys(pc.Secretbox.Keys, path+".secretbox.keys", secretboxKeySizes)...)
			}
		}
	}
	return errs
}

// GroupResource splits a resource of the file ("deployments.apps",
// "secrets", "*.*") at its first dot, as upstream does.
func GroupResource(s string) (group, resource string) {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return s[i+1:], s[:i]
	}
	return "", s
}

// resourceOverlap reports a resource listed twice, and a wildcard that
// masks another entry of the same list.
func resourceOverlap(resources []string, path string) FieldErrors {
	if len(resources) < 2 {
		return nil
	}
	type gr struct{ g, r string }
	l := make([]gr, len(resources))
	for i, s := range resources {
		l[i].g, l[i].r = GroupResource(s)
	}
	var dup, overlap bool
	for i, a := range l {
		for j, b := range l {
			if i == j {
				continue
			}
			if a == b && !dup {
				dup = true
				continue
			}
			if overlap {
				continue
			}
			if a == (gr{"*", "*"}) || a.g == b.g && (a.r == "*" || b.r == "*") {
				overlap = true
			}
		}
	}
	var errs FieldErrors
	if dup {
		errs = append(errs, invalid(path, goValue{resources}, "the same resource cannot be specified multiple times"))
	}
	if overlap {
		errs = append(errs, invalid(path, goValue{resources},
			"using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"))
	}
	return errs
}

// resourcesWithoutREST are upstream's storage-only resources, which the
// file may not name.
var resourcesWithoutREST = []string{"apiserveripinfo", "serviceipallocations", "servicenodeportallocations"}

func resourceNames(resources []string, path string, b Brand) FieldErrors {
	var errs FieldErrors
	for j, res := range resources {
		at := fmt.Sprintf("%s[%d]", path, j)
		g, r := GroupResource(res)
		var detail string
		switch {
		case strings.ToLower(res) != res:
			detail = "resource name should not contain capital letters"
		case res == "*":
			detail = "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
		case contains(resourcesWithoutREST, res):
			detail = "resources which do not have REST API/s cannot be encrypted"
		case g == "events."+b.Domain:
			detail = fmt.Sprintf("'*.events.%s' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file", b.Domain)
		case g == "extensions":
			detail = "'extensions' group has been removed and cannot be used for encryption"
		case g == "*" && r != "*":
			detail = "encrypting the same resource across groups is not supported"
		default:
			continue
		}
		errs = append(errs, invalid(at, res, detail))
	}
	return errs
}

// singleProvider checks that an element names exactly one provider.
func singleProvider(p ProviderConfiguration, path string) *FieldError {
	n := 0
	for _, set := range []bool{p.KMS != nil, p.AESGCM != nil, p.AESCBC != nil, p.Secretbox != nil, p.Identity != nil} {
		if set {
			n++
		}
	}
	switch n {
	case 0:
		return invalid(path, goValue{p}, "provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity")
	case 1:
		return nil
	}
	return invalid(path, goValue{p}, "more than one provider specified in a single element, should split into different list elements")
}

func validateKeys(keys []EncryptionKey, path string, sizes []int) FieldErrors {
	if len(keys) == 0 {
		return FieldErrors{required(path, "at least one keys is required")}
	}
	var errs FieldErrors
	for i, k := range keys {
		at := fmt.Sprintf("%s[%d]", path, i)
		if k.Name == "" {
			errs = append(errs, required(at+".name", "name is a mandatory field for a key"))
		}
		if k.Secret == "" {
			errs = append(errs, required(at+".secret", "secret is a mandatory field for a key"))
			continue
		}
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			errs = append(errs, invalid(at+".secret", "REDACTED", "secrets must be base64 encoded"))
			continue
		}
		if !containsInt(sizes, len(secret)) {
			errs = append(errs, invalid(at+".secret", "REDACTED",
				fmt.Sprintf("secret is not of the expected length, got %d, expected one of %v", len(secret), sizes)))
		}
	}
	return errs
}

func containsInt(l []int, v int) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// ProvidersFor returns the providers of the resource of group, in
// upstream's precedence: the lists naming the resource itself, else the
// group's wildcard ("*.apps", "*." for the core group), else "*.*". A name
// in several lists gets the providers of each, in the file's order, so
// the first list's first provider writes and every one of them reads.
// ok is false when the file does not cover the resource.
func (c *EncryptionConfiguration) ProvidersFor(group, resource string) (providers []Provider, ok bool) {
	for _, want := range [][2]string{{group, resource}, {group, "*"}, {"*", "*"}} {
		for _, rc := range c.Resources {
			for _, s := range rc.Resources {
				if g, r := GroupResource(s); g == want[0] && r == want[1] {
					providers, ok = append(providers, rc.providers()...), true
					break
				}
			}
		}
		if ok {
			return providers, true
		}
	}
	return nil, false
}

// providers decodes a validated list's providers.
func (rc *ResourceConfiguration) providers() []Provider {
	out := make([]Provider, 0, len(rc.Providers))
	for _, p := range rc.Providers {
		var (
			typ  string
			keys []EncryptionKey
		)
		switch {
		case p.AESGCM != nil:
			typ, keys = ProviderAESGCM, p.AESGCM.Keys
		case p.AESCBC != nil:
			typ, keys = ProviderAESCBC, p.AESCBC.Keys
		case p.Secretbox != nil:
			typ, keys = ProviderSecretbox, p.Secretbox.Keys
		case p.Identity != nil:
			typ = ProviderIdentity
		default:
			continue
		}
		pr := Provider{Type: typ}
		for _, k := range keys {
			secret, _ := base64.StdEncoding.DecodeString(k.Secret)
			pr.Keys = append(pr.Keys, ProviderKey{Name: k.Name, Secret: secret})
		}
		out = append(out, pr)
	}
	return out
}
