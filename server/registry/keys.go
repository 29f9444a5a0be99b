package registry

import "strings"

// Storage keys. Every object lives under its storage resource's prefix:
//
//	/<resource>[.<group>]/<namespace>/<name>   namespaced objects
//	/<resource>[.<group>]/<name>               cluster-scoped objects
//	/claims/<pool>/<value>                     values held exclusively
//
// This file is the only place that knows the layout; the REST layer,
// controllers and health checks ask a descriptor for keys and prefixes.

// StorageForm is the descriptor whose form and key prefix objects of d are
// stored in: d itself unless its objects are converted from another
// version.
func (d *Descriptor) StorageForm() *Descriptor {
	if d.Storage != nil && d.Storage.Descriptor != nil {
		return d.Storage.Descriptor
	}
	return d
}

// ResourcePrefix is the key prefix of all of d's objects.
func (d *Descriptor) ResourcePrefix() string {
	s := d.StorageForm()
	if s.Group == "" {
		return "/" + s.Resource + "/"
	}
	return "/" + s.Resource + "." + s.Group + "/"
}

// Prefix is the key prefix of d's objects in namespace ns; "" (or a
// cluster-scoped d) is all of them.
func (d *Descriptor) Prefix(ns string) string {
	if ns == "" || !d.Namespaced {
		return d.ResourcePrefix()
	}
	return d.ResourcePrefix() + ns + "/"
}

// Key is where the object called name in namespace ns lives.
func (d *Descriptor) Key(ns, name string) string {
	return d.Prefix(ns) + name
}

// SplitKey returns the namespace and name of a key under d's resource
// prefix; ok is false for a key that is not.
func (d *Descriptor) SplitKey(key string) (ns, name string, ok bool) {
	rest, found := strings.CutPrefix(key, d.ResourcePrefix())
	if !found || rest == "" {
		return "", "", false
	}
	if !d.Namespaced {
		return "", rest, !strings.Contains(rest, "/")
	}
	ns, name, found = strings.Cut(rest, "/")
	return ns, name, found && ns != "" && name != "" && !strings.Contains(name, "/")
}

// claimsPrefix holds the claim records of Strategy.Claims. No resource
// has that name: core resources are listed and every other resource's
// prefix carries a dotted group.
const claimsPrefix = "/claims/"

// ClaimKey is where a claim is recorded. The value stored there names the
// claiming object's key.
func ClaimKey(c Claim) string {
	return claimsPrefix + c.Pool + "/" + c.Value
}

// ClaimOfKey returns the claim recorded at key; ok is false for a key that
// records none.
func ClaimOfKey(key string) (c Claim, ok bool) {
	rest, found := strings.CutPrefix(key, claimsPrefix)
	if !found {
		return Claim{}, false
	}
	c.Pool, c.Value, ok = strings.Cut(rest, "/")
	return c, ok && c.Pool != "" && c.Value != ""
}

// resourceOfKey returns the first segment of a key with its slashes:
// "/configmaps/" for "/configmaps/ns/cm".
func resourceOfKey(key string) string {
	if len(key) < 2 || key[0] != '/' {
		return ""
	}
	i := strings.IndexByte(key[1:], '/')
	if i < 0 {
		return ""
	}
	return key[:i+2]
}

// StorageType names the stored resource a key or prefix belongs to, as
// storage metrics label it: "configmaps", "deployments.apps", "claims".
func StorageType(key string) string {
	r := resourceOfKey(key)
	if r == "" {
		return ""
	}
	return r[1 : len(r)-1]
}
