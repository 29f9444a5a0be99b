package openapi

import "platd/server/schema"

// discoveryKinds are the discovery kinds of the core group version, marked
// as such wherever a document holds them.
var discoveryKinds = map[string]bool{"APIGroup": true, "APIGroupList": true, "APIVersions": true, "APIResourceList": true}

// builtinSchemas defines the shared kinds the documents reference, for use
// when no schema catalog supplies them (tests, or a catalog without them).
// They carry the structure only.
func builtinSchemas(n schemaNames) map[string]*schema.Schema {
	str := func() *schema.Schema { return &schema.Schema{Type: schema.String} }
	i32 := func() *schema.Schema { return &schema.Schema{Type: schema.Integer, Format: "int32"} }
	i64 := func() *schema.Schema { return &schema.Schema{Type: schema.Integer, Format: "int64"} }
	boolean := func() *schema.Schema { return &schema.Schema{Type: schema.Boolean} }
	strs := func() *schema.Schema {
		return &schema.Schema{Type: schema.Array, Elem: str(), ListType: "atomic"}
	}
	field := func(name string, s *schema.Schema) *schema.Field { return &schema.Field{Name: name, Schema: s} }
	req := func(name string, s *schema.Schema) *schema.Field {
		return &schema.Field{Name: name, Schema: s, Required: true}
	}
	// reqStr is a required string member, which upstream defaults to "".
	reqStr := func(name string) *schema.Field {
		return &schema.Field{Name: name, Schema: str(), Required: true, Default: []byte(`""`)}
	}
	object := func(name string, fields ...*schema.Field) *schema.Schema {
		return &schema.Schema{Name: name, Type: schema.Object, Fields: fields}
	}
	listOf := func(s *schema.Schema) *schema.Schema {
		return &schema.Schema{Type: schema.Array, Elem: s, ListType: "atomic"}
	}
	m := n.meta

	listMeta := object(m+"ListMeta",
		field("continue", str()), field("remainingItemCount", i64()),
		field("resourceVersion", str()), field("selfLink", str()))
	cause := object(m+"StatusCause", field("field", str()), field("message", str()), field("reason", str()))
	details := object(m+"StatusDetails",
		field("causes", listOf(cause)), field("group", str()), field("kind", str()),
		field("name", str()), field("retryAfterSeconds", i32()), field("uid", str()))
	status := object(m+"Status",
		field("apiVersion", str()), field("code", i32()), field("details", details), field("kind", str()),
		field("message", str()), &schema.Field{Name: "metadata", Schema: listMeta, Default: []byte("{}")},
		field("reason", str()), field("status", str()))
	preconditions := object(m+"Preconditions", field("resourceVersion", str()), field("uid", str()))
	deleteOptions := object(m+"DeleteOptions",
		field("apiVersion", str()), field("dryRun", strs()), field("gracePeriodSeconds", i64()),
		field("ignoreStoreReadErrorWithClusterBreakingPotential", boolean()), field("kind", str()),
		field("orphanDependents", boolean()), field("preconditions", preconditions),
		field("propagationPolicy", str()))
	raw := &schema.Schema{Name: n.runtime + "RawExtension", Type: schema.Any}
	watchEvent := object(m+"WatchEvent", req("object", raw), req("type", str()))
	patch := &schema.Schema{Name: m + "Patch", Type: schema.Any}

	resource := object(m+"APIResource",
		field("categories", strs()), field("group", str()), req("kind", str()), req("name", str()),
		req("namespaced", boolean()), field("shortNames", strs()), req("singularName", str()),
		field("storageVersionHash", str()), req("verbs", &schema.Schema{Type: schema.Array, Elem: str()}),
		field("version", str()))
	resourceList := object(m+"APIResourceList",
		field("apiVersion", str()), req("groupVersion", str()), field("kind", str()),
		req("resources", listOf(resource)))
	cidr := object(m+"ServerAddressByClientCIDR", reqStr("clientCIDR"), reqStr("serverAddress"))
	// Required members are listed in upstream's order (its Go types').
	versions := object(m+"APIVersions",
		field("apiVersion", str()), field("kind", str()),
		req("versions", strs()), req("serverAddressByClientCIDRs", listOf(cidr)))
	gvd := object(m+"GroupVersionForDiscovery", reqStr("groupVersion"), reqStr("version"))
	group := object(m+"APIGroup",
		field("apiVersion", str()), field("kind", str()), reqStr("name"),
		&schema.Field{Name: "preferredVersion", Schema: gvd, Default: []byte("{}")},
		field("serverAddressByClientCIDRs", listOf(cidr)), req("versions", listOf(gvd)))
	groupList := object(m+"APIGroupList", field("apiVersion", str()), req("groups", listOf(group)), field("kind", str()))

	out := map[string]*schema.Schema{}
	for _, s := range []*schema.Schema{
		listMeta, cause, details, status, preconditions, deleteOptions, raw, watchEvent, patch,
		resource, resourceList, cidr, versions, gvd, group, groupList,
	} {
		out[s.Name] = s
	}
	return out
}
