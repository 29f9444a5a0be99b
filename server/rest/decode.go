package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"platd/codec"
	"platd/server/apierr"
	"platd/server/audit"
	"platd/server/filters"
	"platd/server/schema"
)

// readBody reads the request body up to maxBodyBytes.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	if n := r.ContentLength; n >= 0 && n <= maxBodyBytes {
		// The usual case: the size is known, read it in one allocation.
		b := make([]byte, n)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, apierr.BadRequest("unable to read request body: " + err.Error())
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, apierr.BadRequest("unable to read request body: " + err.Error())
	}
	if len(b) > maxBodyBytes {
		return nil, apierr.TooLarge(maxBodyBytes)
	}
	return b, nil
}

// unsupportedBody is the 415 of a create or update body in an unknown
// media type.
func (h *Handler) unsupportedBody() error {
	return apierr.UnsupportedMediaType("the body of the request was in an unknown format - accepted media types include: "+strings.Join(h.producedTypes(), ", "), nil)
}

// decoded is a request body after decoding and field validation.
type decoded struct {
	obj      Object
	warnings []string
}

// decodeBody decodes a create or update body against s's schema, applying
// the fieldValidation directive.
func (h *Handler) decodeBody(r *http.Request, s *scope, wo writeOptions) (*decoded, error) {
	mt, _, err := codec.ParseContentType(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, h.unsupportedBody()
	}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	switch mt {
	case mediaJSON:
		// The body is read into a buffer of its own, never written again.
		return h.decodeJSONWith(schema.DecodeOwned, body, s, wo)
	case mediaYAML:
		j, err := codec.YAMLToJSON(body)
		if err != nil {
			return nil, apierr.BadRequest(err.Error())
		}
		return h.decodeJSONWith(schema.DecodeOwned, j, s, wo)
	case h.brand.ProtobufMediaType:
		if s.d.Schema.ProtoMessage == "" {
			return nil, apierr.UnsupportedMediaType("the body of the request was in an unknown format - accepted media types include: "+strings.Join(h.textTypes(), ", "), nil)
		}
		return h.decodeProtobufBody(body, s)
	case codec.CBORMediaType:
		if h.cbor {
			return h.decodeCBOR(body, s, wo)
		}
	}
	return nil, h.unsupportedBody()
}

// decodeCBOR is decodeBody for a CBOR body. As upstream, the kind is read
// first (a body too broken for that is "unrecognized"), then the whole
// item; what it holds is then judged as the same object sent as JSON.
func (h *Handler) decodeCBOR(body []byte, s *scope, wo writeOptions) (*decoded, error) {
	d := s.d
	apiVersion, kind, err := codec.CBORTypeMeta(body)
	if err != nil {
		return nil, apierr.BadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): unable to determine group/version/kind: %v (%s)", d.Kind, err, snippet(body)))
	}
	j, err := codec.CBORToJSON(body)
	if err != nil {
		if kind == "" {
			kind = d.Kind
		}
		if apiVersion == "" {
			apiVersion = d.GroupVersion()
		}
		return nil, apierr.BadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", kind, versionOf(apiVersion), d.Kind, err))
	}
	if d.Schema.ProtoMessage == "" || wo.fieldValidation == validationIgnore {
		// Custom resources are decoded as unstructured content: their
		// unknown fields are found by pruning, named as in JSON.
		return h.decodeJSON(j, s, wo)
	}
	// A built-in type is decoded into its typed form, whose strict check
	// names only the first unknown field, by its index in its map.
	dec, err := h.decodeJSON(j, s, writeOptions{fieldValidation: validationIgnore})
	if err != nil {
		return nil, err
	}
	if uf := codec.CBORUnknownField(body, cborStructOf(d.Schema)); uf != nil {
		if wo.fieldValidation == validationStrict {
			return nil, h.cannotHandle(d.Kind, d.GroupVersion(), "strict decoding error: "+uf.Error())
		}
		dec.warnings = []string{uf.Error()}
	}
	return dec, nil
}

// decodeJSON is decodeBody for bytes already in JSON.
func (h *Handler) decodeJSON(data []byte, s *scope, wo writeOptions) (*decoded, error) {
	return h.decodeJSONWith(schema.Decode, data, s, wo)
}

// decodeJSONWith is decodeJSON through decode (schema.Decode, or
// schema.DecodeOwned for a buffer the caller gives up).
func (h *Handler) decodeJSONWith(decode func([]byte, *schema.Schema) (*schema.Decoded, error), data []byte, s *scope, wo writeOptions) (*decoded, error) {
	d := s.d
	dec, err := decode(data, d.Schema)
	if err != nil {
		if !json.Valid(data) {
			// Syntax errors read as upstream's, which come from encoding/json
			// while it looks for the kind.
			var v any
			jerr := json.Unmarshal(data, &v)
			if jerr == nil {
				jerr = errors.New("invalid JSON")
			}
			return nil, apierr.BadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): couldn't get version/kind; json parse error: %v (%s)", d.Kind, jerr, snippet(data)))
		}
		return nil, h.cannotHandle(d.Kind, d.GroupVersion(), err.Error())
	}
	obj := dec.Object
	if obj == nil {
		return nil, apierr.BadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): couldn't get version/kind; json parse error: expected an object (%s)", d.Kind, snippet(data)))
	}
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	if kind != "" && kind != d.Kind {
		gv := apiVersion
		if gv == "" {
			gv = d.GroupVersion()
		}
		return nil, apierr.BadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: converting (%s.%s) to (%s.%s): unknown conversion",
			kind, versionOf(gv), d.Kind, versionOf(gv), kind, internalPackage(d.Group), d.Kind))
	}
	if !s.acceptsVersion(apiVersion) {
		return nil, apierr.BadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", apiVersion, d.GroupVersion()))
	}
	out := &decoded{obj: obj}
	var problems []string
	for _, f := range dec.Unknown {
		problems = append(problems, fmt.Sprintf("unknown field %q", f))
	}
	for _, f := range dec.Duplicates {
		problems = append(problems, fmt.Sprintf("duplicate field %q", f))
	}
	if len(problems) > 0 {
		switch wo.fieldValidation {
		case validationStrict:
			return nil, h.cannotHandle(d.Kind, d.GroupVersion(), "strict decoding error: "+strings.Join(problems, ", "))
		case validationWarn:
			out.warnings = problems
		}
	}
	obj["kind"], obj["apiVersion"] = d.Kind, d.GroupVersion()
	return out, nil
}

// cannotHandle is the 400 of a body that does not decode as the kind.
func (h *Handler) cannotHandle(kind, gv, msg string) error {
	return apierr.BadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", kind, versionOf(gv), kind, msg))
}

func versionOf(gv string) string {
	if i := strings.LastIndexByte(gv, '/'); i >= 0 {
		return gv[i+1:]
	}
	return gv
}

// internalPackage names a group's internal type package in conversion
// errors: "core" for the core group, else the group's first label.
func internalPackage(group string) string {
	if group == "" {
		return "core"
	}
	if i := strings.IndexByte(group, '.'); i >= 0 {
		return group[:i]
	}
	return group
}

// snippetLength is how much of a bad body a parse error quotes.
const snippetLength = 30

func snippet(data []byte) string {
	if len(data) <= snippetLength {
		return string(data)
	}
	return string(data[:snippetLength]) + " ..."
}

// addWarnings answers texts as Warning headers on w, through the
// request's record of its warnings (filters.AddWarnings): repeated texts
// dropped, all within upstream's bounds.
func addWarnings(ctx context.Context, w http.ResponseWriter, texts []string) {
	filters.AddWarnings(ctx, w.Header(), texts...)
}

// beginWrite is the common start of create and update: the response
// encoding, the write options and the decoded body.
func (h *Handler) beginWrite(r *http.Request, s *scope, optionsKind string) (output, writeOptions, *decoded, error) {
	out, err := h.negotiateFor(r, s.d, false)
	if err != nil {
		return out, writeOptions{}, nil, err
	}
	wo, err := h.parseWriteOptions(r.URL.Query(), optionsKind)
	if err != nil {
		return out, wo, nil, err
	}
	s.options = wo.given
	dec, err := h.decodeBody(r, s, wo)
	if err == nil {
		logRequestObject(r, s, dec.obj)
	}
	return out, wo, dec, err
}

// logRequestObject gives the audit record what the decoded body says of
// its object (a create names it only there) and, at the levels that record
// it, the object as decoded, before admission changes it.
func logRequestObject(r *http.Request, s *scope, obj Object) {
	if audit.From(r.Context()) == nil {
		return
	}
	audit.LogRequestObject(r.Context(), audit.ObjectMeta{Namespace: metaString(obj, "namespace"), Name: metaString(obj, "name"),
		UID: metaString(obj, "uid"), ResourceVersion: metaString(obj, "resourceVersion")},
		func() []byte { return schema.Encode(nil, obj, s.d.Schema) })
}
