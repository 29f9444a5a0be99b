package openapi

import (
	"strings"

	"platd/server/schema"
)

// The non-resource endpoints the documents describe, each in a v3
// document of its own keyed by its path, as upstream indexes them.

// WithVersion documents GET /version, which the server answers with its
// build information.
func WithVersion() Option { return func(h *Handler) { h.version = true } }

// WithIssuerDiscovery documents the service-account issuer's OpenID
// configuration (at configPath) and key set (at jwksPath, served as
// jwksMediaType). Give it only when the server serves them: the issuer
// may not be discoverable.
func WithIssuerDiscovery(configPath, jwksPath, jwksMediaType string) Option {
	return func(h *Handler) {
		h.issuer = &issuerPaths{config: configPath, jwks: jwksPath, jwksMedia: jwksMediaType}
	}
}

// issuerPaths is WithIssuerDiscovery.
type issuerPaths struct{ config, jwks, jwksMedia string }

// Tags and operation ids upstream gives the endpoints.
const (
	versionPath = "/version"
	versionTag  = "version"
	versionOpID = "getCodeVersion"
	issuerTag   = "WellKnown"
	issuerOpID  = "getServiceAccountIssuerOpenIDConfiguration"
	jwksTag     = "openid"
	jwksOpID    = "getServiceAccountIssuerOpenIDKeyset"
)

// endpointDoc is the document of one endpoint: its index key and spec.
type endpointDoc struct {
	key string
	doc *docSpec
}

// endpointDocs returns the documents of the endpoints the handler was told
// the server serves. Paths are documented with a trailing slash, as
// upstream registers them.
func (g *generator) endpointDocs(h *Handler) []endpointDoc {
	var out []endpointDoc
	add := func(path string, op operation) {
		d := g.newDoc()
		op.method = opGet
		d.addPath(pathItem{path: path + "/", ops: []operation{op}})
		out = append(out, endpointDoc{key: strings.Trim(path, "/"), doc: d})
	}
	if h.version {
		d := g.newDoc()
		info := d.use(g.names.version+"Info", versionInfoSchema(g.names))
		d.addPath(pathItem{path: versionPath + "/", ops: []operation{{
			method: opGet, id: versionOpID, tag: versionTag,
			consumes: []string{mediaJSON}, produces: []string{mediaJSON},
			responses: []response{codeOK.with(info)},
		}}})
		out = append(out, endpointDoc{key: strings.Trim(versionPath, "/"), doc: d})
	}
	if h.issuer != nil {
		// The bodies are documented as plain strings, with no request body.
		add(h.issuer.config, operation{id: issuerOpID, tag: issuerTag, consumes: []string{},
			produces: []string{mediaJSON}, responses: []response{codeOK.typed(tString)}})
		add(h.issuer.jwks, operation{id: jwksOpID, tag: jwksTag, consumes: []string{},
			produces: []string{h.issuer.jwksMedia}, responses: []response{codeOK.typed(tString)}})
	}
	return out
}

// versionInfoSchema is the build information /version answers with: every
// member required, each defaulting to the empty string.
func versionInfoSchema(n schemaNames) *schema.Schema {
	s := &schema.Schema{Name: n.version + "Info", Type: schema.Object}
	for _, name := range []string{"major", "minor", "gitVersion", "gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler", "platform"} {
		s.Fields = append(s.Fields, &schema.Field{Name: name, Required: true, Default: []byte(`""`), Schema: &schema.Schema{Type: schema.String}})
	}
	return s
}
