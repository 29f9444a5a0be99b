package schema

import (
	"sort"
	"strings"
	"testing"
)

func TestLoadBrands(t *testing.T) {
	t.Parallel()
	plat := testCatalog(t, "plat")
	kube := testCatalog(t, "kubernetes")
	tests := []struct {
		name    string
		c       *Catalog
		schema  string
		group   string
		kind    string
		message string
	}{
		{"plat core", plat, bn("plat", "@R@.api.core.v1.ConfigMap"), "", "ConfigMap", bn("plat", "@D@.api.core.v1.ConfigMap")},
		{"kubernetes core", kube, kn("@R@.api.core.v1.ConfigMap"), "", "ConfigMap", kn("@D@.api.core.v1.ConfigMap")},
		{"plat rbac", plat, bn("plat", "@R@.api.rbac.v1.ClusterRole"), bn("plat", "rbac.authorization.@D@"), "ClusterRole", bn("plat", "@D@.api.rbac.v1.ClusterRole")},
		{"kubernetes aggregator", kube, kn("@R@.kube-aggregator.pkg.apis.apiregistration.v1.APIService"), kn("apiregistration.@D@"), "APIService", kn("@D@.kube_aggregator.pkg.apis.apiregistration.v1.APIService")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := tt.c.Schema(tt.schema)
			if s == nil {
				t.Fatalf("no schema %s", tt.schema)
			}
			if g := tt.c.ByGVK(tt.group, "v1", tt.kind); g != s {
				t.Errorf("ByGVK(%q, v1, %q) = %v, want %s", tt.group, tt.kind, g, tt.schema)
			}
			if s.ProtoMessage != tt.message {
				t.Errorf("ProtoMessage = %q, want %q", s.ProtoMessage, tt.message)
			}
		})
	}
	if plat.Schema(kn("@R@.api.core.v1.ConfigMap")) != nil || plat.ByGVK(kn("rbac.authorization.@D@"), "v1", "Role") != nil {
		t.Error("plat catalog answers upstream names")
	}
}

func TestCatalogStructure(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	meta := c.Schema(kn("@R@.apimachinery.pkg.apis.meta.v1.ObjectMeta"))
	cm := c.Schema(kn("@R@.api.core.v1.ConfigMap"))
	if cm.Field("metadata").Schema != meta {
		t.Error("ConfigMap.metadata does not share the ObjectMeta schema")
	}
	var names []string
	for _, f := range cm.Fields {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "kind,apiVersion,metadata,immutable,data,binaryData" {
		t.Errorf("ConfigMap field order %s", got)
	}
	if f := cm.Field("binaryData"); f.Schema.Type != Map || f.Schema.Elem.Type != Bytes || f.ProtoNumber != 3 {
		t.Errorf("binaryData = %+v", f)
	}
	if f := meta.Field("creationTimestamp"); f.Schema.Type != Time || f.OmitEmpty || f.ProtoNumber != 8 || !f.ProtoAlways {
		t.Errorf("creationTimestamp = %+v", f)
	}
	if f := meta.Field("deletionTimestamp"); !f.OmitEmpty || !f.Pointer {
		t.Errorf("deletionTimestamp = %+v", f)
	}
	mf := meta.Field("managedFields").Schema
	if mf.Type != Array || mf.Elem.Field("fieldsV1").Schema.Type != Any {
		t.Errorf("managedFields = %+v", mf)
	}
	if f := meta.Field("ownerReferences"); f.PatchStrategy != "merge" || f.PatchMergeKey != "uid" || f.Schema.ListType != "map" || f.Schema.ListMapKeys[0] != "uid" {
		t.Errorf("ownerReferences = %+v %+v", f, f.Schema)
	}
	pod := c.Schema(kn("@R@.api.core.v1.PodSpec"))
	ctr := pod.Field("containers").Schema.Elem
	if ctr.Field("name").Required != true || ctr.Field("ports").Schema.Elem.Field("protocol").Schema.Enum == nil {
		t.Error("Container name not required or protocol without enum")
	}
	if d := ctr.Field("ports").Schema.Elem.Field("protocol").Default; string(d) != `"TCP"` {
		t.Errorf("protocol default %s", d)
	}
	vol := c.Schema(kn("@R@.api.core.v1.Volume"))
	var inline *Field
	for _, f := range vol.Fields {
		if f.Inline {
			inline = f
		}
	}
	if inline == nil || inline.ProtoNumber != 2 || inline.Schema.Field("hostPath") == nil || vol.Field("hostPath").ProtoNumber != 0 {
		t.Errorf("Volume inline source = %+v", inline)
	}
	if c.Schema(kn("@R@.api.core.v1.ResourceRequirements")).Field("limits").Schema.Elem.Type != Quantity {
		t.Error("ResourceList is not a map of Quantity")
	}
	if c.Len() < 500 {
		t.Errorf("only %d named schemas", c.Len())
	}
}

func BenchmarkLoad(b *testing.B) {
	brand := testBrand(b, "plat")
	for b.Loop() {
		c, err := Load(brand)
		if err != nil {
			b.Fatal(err)
		}
		if c.ByGVK("", "v1", "Pod") == nil {
			b.Fatal("no Pod")
		}
	}
}

// TestCatalogUnions checks that the unions of the built-in types are kept,
// and only theirs.
func TestCatalogUnions(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	want := map[string]string{
		"@R@.api.core.v1.AppArmorProfile":                       "type:localhostProfile=LocalhostProfile",
		"@R@.api.core.v1.SeccompProfile":                        "type:localhostProfile=LocalhostProfile",
		"@R@.api.flowcontrol.v1.LimitResponse":                  "type:queuing=Queuing",
		"@R@.api.flowcontrol.v1.PriorityLevelConfigurationSpec": "type:exempt=Exempt,limited=Limited",
		"@R@.api.flowcontrol.v1.Subject":                        "kind:group=Group,serviceAccount=ServiceAccount,user=User",
	}
	got := map[string]string{}
	for name, s := range c.byName {
		for _, u := range s.Unions {
			var members []string
			for f, v := range u.Fields {
				members = append(members, f+"="+v)
			}
			sort.Strings(members)
			got[name] = u.Discriminator + ":" + strings.Join(members, ",")
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d schemas have unions, want %d: %v", len(got), len(want), got)
	}
	for name, w := range want {
		if g := got[kn(name)]; g != w {
			t.Errorf("%s: unions %q, want %q", name, g, w)
		}
	}
}

// TestCatalogKindsOf checks the kinds listed for shared and ordinary
// schemas.
func TestCatalogKindsOf(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	if got := c.KindsOf(kn("@R@.api.core.v1.ConfigMap")); len(got) != 1 || got[0] != (GVK{"", "v1", "ConfigMap"}) {
		t.Errorf("ConfigMap kinds %v", got)
	}
	del := c.KindsOf(kn("@R@.apimachinery.pkg.apis.meta.v1.DeleteOptions"))
	found := false
	for _, k := range del {
		if k == (GVK{"apps", "v1", "DeleteOptions"}) {
			found = true
		}
	}
	if len(del) < 20 || !found {
		t.Errorf("DeleteOptions kinds %v", del)
	}
	if got := c.KindsOf(kn("@R@.api.core.v1.PodSpec")); got != nil {
		t.Errorf("PodSpec kinds %v", got)
	}
}

// TestCatalogRequiredOrder checks that upstream's order of required
// members is kept where it is not the fields' order.
func TestCatalogRequiredOrder(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	if got := c.Schema(kn("@R@.apimachinery.pkg.apis.meta.v1.APIResource")).RequiredOrder; strings.Join(got, ",") != "name,singularName,namespaced,kind,verbs" {
		t.Errorf("APIResource required order %v", got)
	}
	// Members are in Go declaration order, which an owner reference's
	// required ones follow: no separate order is kept.
	or := c.Schema(kn("@R@.apimachinery.pkg.apis.meta.v1.OwnerReference"))
	var names []string
	for _, f := range or.Fields {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "apiVersion,kind,name,uid,controller,blockOwnerDeletion" || or.RequiredOrder != nil {
		t.Errorf("OwnerReference members %v, required order %v", names, or.RequiredOrder)
	}
	if got := c.Schema(kn("@R@.api.core.v1.ConfigMap")).RequiredOrder; got != nil {
		t.Errorf("ConfigMap required order %v", got)
	}
}

// TestCatalogDocumentedTypes checks the list and map types documented
// beside references and on byte strings.
func TestCatalogDocumentedTypes(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	field := func(schemaName, name string) *Field {
		for _, f := range c.Schema(kn(schemaName)).Fields {
			if f.Name == name {
				return f
			}
		}
		t.Fatalf("%s has no %s", schemaName, name)
		return nil
	}
	if f := field("@R@.apimachinery.pkg.apis.meta.v1.Status", "details"); f.DocListType != "atomic" || f.DocMapType != "" {
		t.Errorf("Status.details: %q %q", f.DocListType, f.DocMapType)
	}
	if f := field("@R@.api.core.v1.PersistentVolumeSpec", "claimRef"); f.DocMapType != "granular" {
		t.Errorf("PersistentVolumeSpec.claimRef: %q", f.DocMapType)
	}
	if f := field("@R@.api.certificates.v1.CertificateSigningRequestSpec", "request"); f.Schema.Type != Bytes || f.Schema.ListType != "atomic" {
		t.Errorf("CertificateSigningRequestSpec.request: %v %q", f.Schema.Type, f.Schema.ListType)
	}
}
