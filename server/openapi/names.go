package openapi

import (
	"strings"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

// camel joins the dot- and dash-separated parts of s, each capitalised:
// "rbac.authorization" → "RbacAuthorization".
func camel(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '-' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// lowerFirst lower-cases the first letter of s.
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// groupName is the operationId and tag form of a group: "Core" for the
// core group, the brand domain dropped from branded groups, and other
// groups (custom resources) in full.
func groupName(b config.Brand, group string) string {
	if group == "" {
		return "Core"
	}
	if p, ok := b.Unbrand(group); ok && p != "" {
		return camel(p)
	}
	return camel(group)
}

// gvName is the group-version part of operation ids: "CoreV1",
// "RbacAuthorizationV1".
func gvName(b config.Brand, group, version string) string {
	return groupName(b, group) + camel(version)
}

// gvTag is the tag of a group-version's operations: "core_v1".
func gvTag(b config.Brand, group, version string) string {
	return lowerFirst(groupName(b, group)) + "_" + version
}

// urlPrefix is the path of a group-version: "/api/v1" or "/apis/<g>/<v>".
func urlPrefix(group, version string) string {
	if group == "" {
		return "/api/" + version
	}
	return "/apis/" + group + "/" + version
}

// indexKey is the key of a group-version document in the v3 index.
func indexKey(group, version string) string {
	return strings.TrimPrefix(urlPrefix(group, version), "/")
}

// schemaNames derives shared schema names from the brand: the schema
// catalog names types by the reversed brand domain, as upstream does with
// its own.
type schemaNames struct{ meta, runtime, version string }

func newSchemaNames(b config.Brand) schemaNames {
	r := schema.ReverseDomain(b.Domain)
	return schemaNames{meta: r + ".apimachinery.pkg.apis.meta.v1.", runtime: r + ".apimachinery.pkg.runtime.", version: r + ".apimachinery.pkg.version."}
}

// objectName is the schema name of a descriptor's kind: its schema's own
// name, or for unnamed schemas (custom resources) "<reversed group>.<version>.<Kind>".
func objectName(d *registry.Descriptor) string {
	if d.Schema != nil && d.Schema.Name != "" {
		return d.Schema.Name
	}
	g := d.Group
	if g == "" {
		g = "core"
	}
	return schema.ReverseDomain(g) + "." + d.Version + "." + d.Kind
}

// listName is the schema name of a descriptor's list kind, a sibling of the
// object's name.
func listName(d *registry.Descriptor) string {
	n := objectName(d)
	if p, ok := strings.CutSuffix(n, d.Kind); ok {
		return p + d.ListKind
	}
	return n + "List"
}
