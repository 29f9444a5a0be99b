package openapi

import (
	"strings"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

// generator turns descriptors into document specs for one brand. It is
// used by one goroutine at a time (under the Handler's lock).
type generator struct {
	brand config.Brand
	// cbor lists the CBOR media types on built-in resources.
	cbor   bool
	names  schemaNames
	lookup Lookup
	kinds  KindLookup
	// schemaKinds is the handler's WithSchemaKinds.
	schemaKinds SchemaKinds
	meta        map[string]*schema.Schema
}

func (h *Handler) newGenerator() *generator {
	n := newSchemaNames(h.brand)
	return &generator{brand: h.brand, cbor: h.cbor, names: n, lookup: h.lookup, kinds: h.kinds, schemaKinds: h.schemaKinds, meta: builtinSchemas(n)}
}

// kindsOf returns every kind the named schema is the schema of, when the
// schema catalog or the package's own discovery kinds know it; nil leaves
// the document's marks.
func (g *generator) kindsOf(name string) []gvk {
	if g.schemaKinds != nil {
		if ks := g.schemaKinds(name); len(ks) > 0 {
			out := make([]gvk, len(ks))
			for i, k := range ks {
				out[i] = gvk{Group: k.Group, Version: k.Version, Kind: k.Kind}
			}
			return out
		}
	}
	if short, ok := strings.CutPrefix(name, g.names.meta); ok && discoveryKinds[short] {
		return []gvk{{Version: "v1", Kind: short}}
	}
	return nil
}

// shared returns a shared schema by full name: the lookup's when it has
// one, else the package's own definition, else nil.
func (g *generator) shared(name string) *schema.Schema {
	if g.lookup != nil {
		if s := g.lookup(name); s != nil {
			return s
		}
	}
	return g.meta[name]
}

// docSpec is one document being assembled: its paths, the schemas the
// operations name, and the group-version-kinds to mark schemas with.
type docSpec struct {
	g     *generator
	paths []pathItem
	roots map[string]*schema.Schema
	gvks  map[string][]gvk
}

func (g *generator) newDoc() *docSpec {
	return &docSpec{g: g, roots: map[string]*schema.Schema{}, gvks: map[string][]gvk{}}
}

// use records that operations reference s under name and returns name.
func (d *docSpec) use(name string, s *schema.Schema) string {
	if _, ok := d.roots[name]; !ok {
		d.roots[name] = s
	}
	return name
}

// useShared records a shared schema by full name and returns the name.
func (d *docSpec) useShared(name string) string { return d.use(name, d.g.shared(name)) }

// mark adds k to the kinds listed on schema name.
func (d *docSpec) mark(name string, k gvk) {
	for _, have := range d.gvks[name] {
		if have == k {
			return
		}
	}
	d.gvks[name] = append(d.gvks[name], k)
}

// produces lists the response media types of a descriptor; protobuf (and
// CBOR, when served) only for kinds that have a protobuf message (built-in
// types): custom resources' documents are built from a fixed list.
func (d *docSpec) produces(desc *registry.Descriptor, stream bool) []string {
	out := []string{mediaJSON, mediaYAML}
	builtin := desc.Schema != nil && desc.Schema.ProtoMessage != ""
	if builtin {
		out = append(out, d.g.brand.ProtobufMediaType)
		if d.g.cbor {
			out = append(out, mediaCBOR)
		}
	}
	if stream {
		out = append(out, mediaJSON+streamWatch)
		if builtin {
			out = append(out, d.g.brand.ProtobufMediaType+streamWatch)
			if d.g.cbor {
				out = append(out, mediaCBORSeq)
			}
		}
	}
	return out
}

// patchTypes are the PATCH body types; strategic merge needs the built-in
// types' patch metadata, so custom resources (no protobuf message) lack it.
func (d *docSpec) patchTypes(desc *registry.Descriptor) []string {
	if desc.Schema != nil && desc.Schema.ProtoMessage != "" {
		if d.g.cbor {
			return []string{mediaJSONPatch, mediaMergePatch, mediaStrategicPatch, mediaApplyPatch, mediaApplyCBOR}
		}
		return []string{mediaJSONPatch, mediaMergePatch, mediaStrategicPatch, mediaApplyPatch}
	}
	return []string{mediaJSONPatch, mediaMergePatch, mediaApplyPatch}
}

// objectSchema is the descriptor's schema, or an open object when it has
// none.
func objectSchema(desc *registry.Descriptor) *schema.Schema {
	if desc.Schema != nil {
		return desc.Schema
	}
	return &schema.Schema{Type: schema.Object, PreserveUnknown: true}
}

// listSchema is the list kind's schema: the lookup's, else one built from
// the object schema and ListMeta.
func (d *docSpec) listSchema(desc *registry.Descriptor, objName string, obj *schema.Schema) *schema.Schema {
	if s := d.g.shared(listName(desc)); s != nil {
		return s
	}
	listMeta := d.g.shared(d.g.names.meta + "ListMeta")
	return &schema.Schema{Name: listName(desc), Type: schema.Object, Fields: []*schema.Field{
		{Name: "apiVersion", Schema: &schema.Schema{Type: schema.String}},
		{Name: "items", Required: true, Schema: &schema.Schema{Type: schema.Array, Elem: namedAs(obj, objName)}},
		{Name: "kind", Schema: &schema.Schema{Type: schema.String}},
		{Name: "metadata", Default: []byte("{}"), Schema: listMeta},
	}}
}

// namedAs returns s carrying name, copying it when its own name differs
// (unnamed custom resource schemas).
func namedAs(s *schema.Schema, name string) *schema.Schema {
	if s.Name == name {
		return s
	}
	c := *s
	c.Name = name
	return &c
}

// addResource adds every path of one resource.
func (d *docSpec) addResource(desc *registry.Descriptor) {
	g := d.g
	b := g.brand
	objName := objectName(desc)
	obj := namedAs(objectSchema(desc), objName)
	d.use(objName, obj)
	kind := gvk{Group: desc.Group, Version: desc.Version, Kind: desc.Kind}
	d.mark(objName, kind)
	gv := gvName(b, desc.Group, desc.Version)
	tag := gvTag(b, desc.Group, desc.Version)
	ns := ""
	if desc.Namespaced {
		ns = "Namespaced"
	}
	// Status is in the document only when an operation answers it.
	statusName := g.names.meta + "Status"
	prefix := urlPrefix(desc.Group, desc.Version)
	scoped := prefix
	var scopeParams []param
	if desc.Namespaced {
		scoped += "/namespaces/{namespace}"
		scopeParams = []param{paramNamespace}
	}
	op := func(method, id, action string) operation {
		return operation{method: method, id: id, tag: tag, action: action, gvk: &kind, produces: d.produces(desc, false)}
	}

	// Collection: list, create, deletecollection.
	coll := pathItem{path: scoped + "/" + desc.Resource, params: joinParams(scopeParams, []param{paramPretty})}
	var listRef string
	if desc.HasVerb(registry.VerbList) || desc.HasVerb(registry.VerbWatch) {
		list := d.listSchema(desc, objName, obj)
		listRef = d.use(list.Name, list)
		d.mark(list.Name, gvk{Group: desc.Group, Version: desc.Version, Kind: desc.ListKind})
	}
	if desc.HasVerb(registry.VerbList) {
		o := op(opGet, "list"+gv+ns+desc.Kind, actionList)
		o.params = listParams
		o.produces = d.produces(desc, true)
		o.responses = []response{codeOK.with(listRef)}
		coll.ops = append(coll.ops, o)
	}
	if desc.HasVerb(registry.VerbCreate) {
		o := op(opPost, "create"+gv+ns+desc.Kind, actionPost)
		o.params = writeParams
		o.requestTypes, o.requestRef, o.requestRequired = []string{mediaAny}, objName, true
		o.responses = []response{codeOK.with(objName), codeCreated.with(objName), codeAccepted.with(objName)}
		coll.ops = append(coll.ops, o)
	}
	if desc.HasVerb(registry.VerbDeleteCollection) {
		o := op(opDelete, "delete"+gv+"Collection"+ns+desc.Kind, actionDeleteCollection)
		o.params = deleteCollectionParams()
		o.requestTypes, o.requestRef = []string{mediaAny}, d.useShared(g.names.meta+"DeleteOptions")
		o.responses = []response{codeOK.with(d.useShared(statusName))}
		coll.ops = append(coll.ops, o)
	}
	d.addPath(coll)

	// Item: read, replace, patch, delete.
	itemPath := scoped + "/" + desc.Resource + "/{name}"
	itemParams := joinParams([]param{paramName}, scopeParams, []param{paramPretty})
	item := pathItem{path: itemPath, params: itemParams}
	item.ops = d.itemOps(desc, desc.Verbs, gv+ns+desc.Kind, objName, op)
	if desc.HasVerb(registry.VerbDelete) {
		o := op(opDelete, "delete"+gv+ns+desc.Kind, actionDelete)
		o.params = deleteParams
		o.requestTypes, o.requestRef = []string{mediaAny}, d.useShared(g.names.meta+"DeleteOptions")
		deleted := objName
		if !desc.ReturnDeleted || desc.DeleteDocumentedAsStatus {
			deleted = d.useShared(statusName)
		}
		o.responses = []response{codeOK.with(deleted), codeAccepted.with(deleted)}
		item.ops = append(item.ops, o)
	}
	d.addPath(item)

	// Across namespaces.
	if desc.Namespaced && desc.HasVerb(registry.VerbList) {
		o := op(opGet, "list"+gv+desc.Kind+"ForAllNamespaces", actionList)
		o.produces = d.produces(desc, true)
		o.responses = []response{codeOK.with(listRef)}
		d.addPath(pathItem{path: prefix + "/" + desc.Resource, params: joinParams(listParams, []param{paramPretty}), ops: []operation{o}})
	}

	// Watch paths (deprecated upstream, still served).
	if desc.HasVerb(registry.VerbWatch) {
		event := d.useShared(g.names.meta + "WatchEvent")
		watchOp := func(id, action string) operation {
			o := op(opGet, id, action)
			o.produces = d.produces(desc, true)
			o.responses = []response{codeOK.with(event)}
			return o
		}
		watchScoped := prefix + "/watch"
		if desc.Namespaced {
			watchScoped += "/namespaces/{namespace}"
		}
		d.addPath(pathItem{path: watchScoped + "/" + desc.Resource, params: joinParams(listParams, scopeParams, []param{paramPretty}),
			ops: []operation{watchOp("watch"+gv+ns+desc.Kind+"List", actionWatchList)}})
		d.addPath(pathItem{path: watchScoped + "/" + desc.Resource + "/{name}", params: joinParams(listParams, []param{paramName}, scopeParams, []param{paramPretty}),
			ops: []operation{watchOp("watch"+gv+ns+desc.Kind, actionWatch)}})
		if desc.Namespaced {
			d.addPath(pathItem{path: prefix + "/watch/" + desc.Resource, params: joinParams(listParams, []param{paramPretty}),
				ops: []operation{watchOp("watch"+gv+desc.Kind+"ListForAllNamespaces", actionWatchList)}})
		}
	}

	// Subresources answer with the parent's kind unless they name their
	// own.
	for _, sub := range desc.Subresources {
		switch {
		case len(sub.Connect) > 0:
			d.addConnect(desc, sub, itemPath, joinParams([]param{paramName}, scopeParams), ns+desc.Kind)
			continue
		case sub.Text:
			d.addText(desc, sub, itemPath, itemParams, ns+desc.Kind, op)
			continue
		}
		subName, subOp := objName, op
		if s, k := d.subresourceKind(sub); s != nil {
			subName = d.use(s.Name, s)
			d.mark(subName, k)
			subOp = func(method, id, action string) operation {
				o := op(method, id, action)
				o.gvk = &k
				return o
			}
		}
		p := pathItem{path: itemPath + "/" + sub.Name, params: itemParams}
		p.ops = d.itemOps(desc, sub.Verbs, gv+ns+desc.Kind+camel(sub.Name), subName, subOp)
		for _, v := range sub.Verbs {
			if v == registry.VerbCreate {
				o := subOp(opPost, "create"+gv+ns+desc.Kind+camel(sub.Name), actionPost)
				o.params = writeParams
				o.requestTypes, o.requestRef, o.requestRequired = []string{mediaAny}, subName, true
				o.responses = []response{codeOK.with(subName), codeCreated.with(subName), codeAccepted.with(subName)}
				p.ops = append(p.ops, o)
			}
		}
		d.addPath(p)
	}
}

// subresourceKind returns the schema and kind a subresource answers with
// when it names its own kind and the kind lookup knows it, else nil.
func (d *docSpec) subresourceKind(sub registry.Subresource) (*schema.Schema, gvk) {
	k := gvk{Group: sub.Group, Version: sub.Version, Kind: sub.Kind}
	if sub.Kind == "" || d.g.kinds == nil {
		return nil, k
	}
	s := d.g.kinds(sub.Group, sub.Version, sub.Kind)
	if s == nil || s.Name == "" {
		return nil, k
	}
	return s, k
}

// itemOps builds the get, put and patch operations of an object path for
// the verbs given; idSuffix follows the verb in the operation id.
func (d *docSpec) itemOps(desc *registry.Descriptor, verbs []string, idSuffix, objName string,
	op func(method, id, action string) operation) []operation {
	has := func(v string) bool {
		for _, x := range verbs {
			if x == v {
				return true
			}
		}
		return false
	}
	var ops []operation
	if has(registry.VerbGet) {
		o := op(opGet, "read"+idSuffix, actionGet)
		o.responses = []response{codeOK.with(objName)}
		ops = append(ops, o)
	}
	if has(registry.VerbUpdate) {
		o := op(opPut, "replace"+idSuffix, actionPut)
		o.params = writeParams
		o.requestTypes, o.requestRef, o.requestRequired = []string{mediaAny}, objName, true
		o.responses = []response{codeOK.with(objName), codeCreated.with(objName)}
		ops = append(ops, o)
	}
	if has(registry.VerbPatch) {
		o := op(opPatch, "patch"+idSuffix, actionPatch)
		o.params = joinParams(writeParams, []param{paramForce})
		o.requestTypes, o.requestRef, o.requestRequired = d.patchTypes(desc), d.useShared(d.g.names.meta+"Patch"), true
		o.responses = []response{codeOK.with(objName), codeCreated.with(objName)}
		ops = append(ops, o)
	}
	return ops
}

// addPath adds p unless it has no operations.
func (d *docSpec) addPath(p pathItem) {
	if len(p.ops) > 0 {
		d.paths = append(d.paths, p)
	}
}

// addDiscovery adds the GET of a discovery path answering with the shared
// schema named short.
func (d *docSpec) addDiscovery(path, id, tag, short string) {
	name := d.useShared(d.g.names.meta + short)
	d.mark(name, gvk{Version: "v1", Kind: short})
	media := []string{mediaJSON, mediaYAML, d.g.brand.ProtobufMediaType}
	// v2 lists the same media types as consumed, as upstream does.
	d.addPath(pathItem{path: path, ops: []operation{{
		method: opGet, id: id, tag: tag,
		consumes: media, produces: media,
		responses: []response{codeOK.with(name)},
	}}})
}
