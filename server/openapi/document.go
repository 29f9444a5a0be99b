package openapi

import (
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"platd/server/registry"
	"sort"
	"strings"
	"time"
)

// Document constants.
const (
	// apiLevel is the API version the documents describe: the level of
	// the REST API platd implements.
	apiLevel     = "1.32.0"
	openAPIv3    = "3.0.0"
	swaggerV2    = "2.0"
	bearerScheme = "BearerToken"
)

// servedDoc is one document ready to serve. It is immutable.
type servedDoc struct {
	state registry.Snapshot
	// body is the compact JSON the server sends; hash is its upper-case
	// hex SHA-512, which is also its ETag and its ?hash= value.
	body     []byte
	hash     string
	modified time.Time
}

// newServedDoc encodes doc: v3 documents (ordered) with their members in
// upstream's order, the v2 document sorted.
func newServedDoc(state registry.Snapshot, doc obj, modified time.Time, ordered bool) *servedDoc {
	encode := json.Marshal
	if ordered {
		encode = marshalOrdered
	}
	body, err := encode(doc)
	if err != nil {
		// The documents hold only strings, numbers, bools, slices, maps and
		// valid raw defaults; a failure is a programming error.
		panic("openapi: encoding a document: " + err.Error())
	}
	sum := sha512.Sum512(body)
	return &servedDoc{state: state, body: body, hash: strings.ToUpper(hex.EncodeToString(sum[:])), modified: modified}
}

// v3Set is every v3 document of one registry state plus the index.
type v3Set struct {
	state registry.Snapshot
	docs  map[string]*v3Doc
	index []byte
	// modified is when the set was built (Last-Modified).
	modified time.Time
}

// title names the API in info.title: the brand's name, capitalised.
func (g *generator) title() string { return camel(g.brand.Name) }

func (g *generator) info() obj { return obj{"title": g.title(), "version": apiLevel} }

// finish renders a document spec in dialect dl: its paths and every schema
// they reach.
func (d *docSpec) finish(dl dialect) (paths, schemas obj) {
	c := newConverter(dl, d.gvks)
	c.kindsOf = d.g.kindsOf
	names := make([]string, 0, len(d.roots))
	for n := range d.roots {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c.ref(n, d.roots[n])
	}
	paths = c.renderPaths(d.paths)
	return paths, c.definitions()
}

// markShared lists the group-versions of a document on the shared option
// and event kinds, and core v1 on Status, as upstream's documents do.
func (d *docSpec) markShared(versions [][2]string) {
	m := d.g.names.meta
	if _, ok := d.roots[m+"Status"]; ok {
		d.mark(m+"Status", gvk{Version: "v1", Kind: "Status"})
	}
	for _, short := range []string{"DeleteOptions", "WatchEvent"} {
		if _, ok := d.roots[m+short]; !ok {
			continue
		}
		d.mark(m+short, gvk{Version: "v1", Kind: short})
		for _, gv := range versions {
			d.mark(m+short, gvk{Group: gv[0], Version: gv[1], Kind: short})
		}
	}
}

// v3Doc renders a v3 document: its schemas, when it has any, and the
// bearer token scheme, as upstream's documents declare it.
func (d *docSpec) v3Doc() obj {
	paths, schemas := d.finish(v3)
	components := obj{"securitySchemes": obj{bearerScheme: bearerSchemeDef()}}
	if len(schemas) > 0 {
		components["schemas"] = schemas
	}
	return obj{
		"openapi":    openAPIv3,
		"info":       d.g.info(),
		"paths":      paths,
		"components": components,
	}
}

// bearerSchemeDef is the security scheme of bearer tokens: the
// Authorization header.
func bearerSchemeDef() obj { return obj{"type": "apiKey", "name": "authorization", "in": "header"} }

// gvDoc builds the spec of one group-version.
func (g *generator) gvDoc(state registry.Snapshot, group, version string) *docSpec {
	d := g.newDoc()
	d.addDiscovery(urlPrefix(group, version)+"/", "get"+gvName(g.brand, group, version)+"APIResources",
		gvTag(g.brand, group, version), "APIResourceList")
	for _, desc := range state.Resources(group, version) {
		d.addResource(desc)
	}
	d.markShared([][2]string{{group, version}})
	return d
}

// buildV3 renders every v3 document and the index; eps are the documents
// of the non-resource endpoints.
func buildV3(state registry.Snapshot, g *generator, eps []endpointDoc, now time.Time) *v3Set {
	set := &v3Set{state: state, docs: map[string]*v3Doc{}, modified: now}
	add := func(key string, d *docSpec) {
		set.docs[key] = &v3Doc{servedDoc: newServedDoc(state, d.v3Doc(), now, true)}
	}
	for i, group := range state.Groups {
		if group == "" {
			d := g.newDoc()
			d.addDiscovery("/api/", "getCoreAPIVersions", "core", "APIVersions")
			add("api", d)
		} else {
			d := g.newDoc()
			d.addDiscovery("/apis/"+group+"/", "get"+groupName(g.brand, group)+"APIGroup",
				lowerFirst(groupName(g.brand, group)), "APIGroup")
			add("apis/"+group, d)
		}
		for _, v := range state.Versions[i] {
			add(indexKey(group, v), g.gvDoc(state, group, v))
		}
	}
	d := g.newDoc()
	d.addDiscovery("/apis/", "getAPIVersions", "apis", "APIGroupList")
	add("apis", d)
	for _, ep := range eps {
		add(ep.key, ep.doc)
	}

	paths := obj{}
	for key, doc := range set.docs {
		paths[key] = obj{"serverRelativeURL": pathV3Prefix + key + "?hash=" + doc.hash}
	}
	index, err := json.Marshal(obj{"paths": paths})
	if err != nil {
		panic("openapi: encoding the index: " + err.Error())
	}
	set.index = index
	return set
}

// buildV2 renders the single v2 document covering every group-version and
// the non-resource endpoints eps.
func buildV2(state registry.Snapshot, g *generator, eps []endpointDoc, now time.Time) *servedDoc {
	d := g.newDoc()
	for _, ep := range eps {
		d.paths = append(d.paths, ep.doc.paths...)
		for name, s := range ep.doc.roots {
			d.use(name, s)
		}
	}
	var gvs [][2]string
	d.addDiscovery("/apis/", "getAPIVersions", "apis", "APIGroupList")
	for i, group := range state.Groups {
		if group == "" {
			d.addDiscovery("/api/", "getCoreAPIVersions", "core", "APIVersions")
		} else {
			d.addDiscovery("/apis/"+group+"/", "get"+groupName(g.brand, group)+"APIGroup",
				lowerFirst(groupName(g.brand, group)), "APIGroup")
		}
		for _, v := range state.Versions[i] {
			gvs = append(gvs, [2]string{group, v})
			d.addDiscovery(urlPrefix(group, v)+"/", "get"+gvName(g.brand, group, v)+"APIResources",
				gvTag(g.brand, group, v), "APIResourceList")
			for _, desc := range state.Resources(group, v) {
				d.addResource(desc)
			}
		}
	}
	d.markShared(gvs)
	paths, defs := d.finish(v2)
	return newServedDoc(state, obj{
		"swagger":             swaggerV2,
		"info":                g.info(),
		"paths":               paths,
		"definitions":         defs,
		"securityDefinitions": obj{bearerScheme: bearerSchemeDef()},
		"security":            []any{obj{bearerScheme: []string{}}},
	}, now, false)
}
