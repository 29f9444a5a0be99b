package openapi

import (
	"strings"

	"platd/server/registry"
)

// actionConnect is x-kubernetes-action of connect operations.
const actionConnect = "connect"

// HTTP methods only connect operations have.
const (
	opHead    = "head"
	opOptions = "options"
)

// mediaText is what a text stream (a log) is also documented in.
const mediaText = "text/plain"

// queryParams are a subresource's query parameters.
func queryParams(sub registry.Subresource) []param {
	out := make([]param, 0, len(sub.Query))
	for _, q := range sub.Query {
		out = append(out, param{name: q.Name, in: inQuery, typ: q.Type})
	}
	return out
}

// addConnect adds the paths of a connect subresource: one operation per
// method, named by its options kind and answering any media type as a
// string. A proxy also gets the path with the proxied path appended.
// scopeParams are the object path's parameters but pretty, which connects
// do not take; idKind is the operation id part after the method
// ("NamespacedPod").
func (d *docSpec) addConnect(desc *registry.Descriptor, sub registry.Subresource, itemPath string, scopeParams []param, idKind string) {
	b := d.g.brand
	gv := gvName(b, desc.Group, desc.Version)
	tag := gvTag(b, desc.Group, desc.Version)
	kind := gvk{Group: sub.Group, Version: sub.Version, Kind: sub.Kind}
	ops := func(suffix string) []operation {
		var out []operation
		for _, m := range sub.Connect {
			method := strings.ToLower(m)
			out = append(out, operation{
				method: method, id: "connect" + gv + camel(method) + idKind + camel(sub.Name) + suffix,
				tag: tag, action: actionConnect, gvk: &kind,
				consumes: []string{mediaAny}, produces: []string{mediaAny},
				responses: []response{codeOK.typed(tString)},
			})
		}
		return out
	}
	base := itemPath + "/" + sub.Name
	d.addPath(pathItem{path: base, params: joinParams(scopeParams, queryParams(sub)), ops: ops("")})
	if sub.Proxy {
		// The path segment sorts before the query parameter of the same
		// name, as upstream lists them.
		withPath := joinParams(scopeParams, []param{{name: "path", in: inPath, typ: tString, required: true}}, queryParams(sub))
		d.addPath(pathItem{path: base + "/{path}", params: withPath, ops: ops("WithPath")})
	}
}

// addText adds the GET of a subresource answering a text stream (a pod's
// log): the resource's kind, a string body.
func (d *docSpec) addText(desc *registry.Descriptor, sub registry.Subresource, itemPath string, itemParams []param, idKind string, op func(method, id, action string) operation) {
	o := op(opGet, "read"+gvName(d.g.brand, desc.Group, desc.Version)+idKind+camel(sub.Name), actionGet)
	o.params = queryParams(sub)
	o.produces = append([]string{mediaText}, o.produces...)
	o.responses = []response{codeOK.typed(tString)}
	d.addPath(pathItem{path: itemPath + "/" + sub.Name, params: itemParams, ops: []operation{o}})
}
