package openapi

// The dialect-neutral description of a document's paths, rendered to v3 or
// v2 JSON by render.go.

// gvk is a group-version-kind as the x-kubernetes-group-version-kind
// extension spells it.
type gvk struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// response is one status code of an operation; ref is the schema name of
// the body, typ the type of an unnamed body (a string), both empty for
// none.
type response struct {
	code, description, ref, typ string
}

// operation is one HTTP method on a path.
type operation struct {
	method string
	id     string
	tag    string
	// action is x-kubernetes-action; empty on discovery operations.
	action string
	// gvk is x-kubernetes-group-version-kind; nil on discovery operations.
	gvk    *gvk
	params []param
	// requestTypes and requestRef describe the body; requestRef empty
	// means no body.
	requestTypes    []string
	requestRef      string
	requestRequired bool
	// consumes, when not nil, is what v2 lists as consumed in place of the
	// request types (empty: nothing listed).
	consumes  []string
	produces  []string
	responses []response
}

// pathItem is one path with its shared parameters.
type pathItem struct {
	path   string
	params []param
	ops    []operation
}

// HTTP methods as the documents key them.
const (
	opGet    = "get"
	opPut    = "put"
	opPost   = "post"
	opPatch  = "patch"
	opDelete = "delete"
)

// x-kubernetes-action values.
const (
	actionGet              = "get"
	actionList             = "list"
	actionPost             = "post"
	actionPut              = "put"
	actionPatch            = "patch"
	actionDelete           = "delete"
	actionDeleteCollection = "deletecollection"
	actionWatch            = "watch"
	actionWatchList        = "watchlist"
)

// Response codes and their descriptions.
var (
	codeOK           = response{code: "200", description: "OK"}
	codeCreated      = response{code: "201", description: "Created"}
	codeAccepted     = response{code: "202", description: "Accepted"}
	codeUnauthorized = response{code: "401", description: "Unauthorized"}
)

// with returns r answering with the named schema.
func (r response) with(ref string) response { r.ref = ref; return r }

// typed returns r answering with an unnamed body of JSON type typ.
func (r response) typed(typ string) response { r.typ = typ; return r }

// Media types of request and response bodies.
const (
	mediaJSON           = "application/json"
	mediaYAML           = "application/yaml"
	mediaAny            = "*/*"
	mediaJSONPatch      = "application/json-patch+json"
	mediaMergePatch     = "application/merge-patch+json"
	mediaStrategicPatch = "application/strategic-merge-patch+json"
	mediaApplyPatch     = "application/apply-patch+yaml"
	mediaApplyCBOR      = "application/apply-patch+cbor"
	mediaCBOR           = "application/cbor"
	mediaCBORSeq        = "application/cbor-seq"
	streamWatch         = ";stream=watch"
)
