package rest

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"platd/bolt"
	"platd/codec"
	"platd/server/apierr"
	"platd/server/schema"
)

// serveApply serves PATCH with an apply configuration (server-side
// apply): the configuration is merged into the object, or creates it,
// with the fields it sets owned by its manager.
func (h *Handler) serveApply(w http.ResponseWriter, r *http.Request, s *scope) {
	out, err := h.negotiateFor(r, s.d, false)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	a, err := h.readApply(r, s)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	stored, code, err := h.applyObject(r.Context(), s, a)
	addWarnings(r.Context(), w, s.warnings)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeObject(w, r, out, code, s.d, stored)
}

// applyRequest is a read apply request. strict and warnings are what
// field validation found in the body; as upstream, they count only once
// the configuration has merged (a conflict is reported first).
type applyRequest struct {
	config        Object
	force, dryRun bool
	strict        error
	warnings      []string
}

// readApply reads an apply request's options and configuration and makes
// s an apply by its field manager.
func (h *Handler) readApply(r *http.Request, s *scope) (applyRequest, error) {
	q := r.URL.Query()
	wo, err := h.parseWriteOptions(q, kindPatchOptions)
	if err != nil {
		return applyRequest{}, err
	}
	s.options = wo.given
	if wo.fieldManager == "" {
		return applyRequest{}, h.optionsInvalid(kindPatchOptions, apierr.Required("fieldManager", "is required for apply patch"))
	}
	a := applyRequest{dryRun: wo.dryRun}
	a.force, _ = queryBool(q, "force")
	body, err := readBody(r)
	if err != nil {
		return applyRequest{}, err
	}
	var config map[string]any
	var warnings []string
	if mt, _, _ := codec.ParseContentType(r.Header.Get("Content-Type")); mt == codec.ApplyCBORMediaType {
		config, err = decodeApplyCBOR(body)
	} else {
		config, warnings, err = decodeApplyConfig(body, wo.fieldValidation)
	}
	if config == nil {
		return applyRequest{}, err
	}
	a.config, a.strict, a.warnings = config, err, warnings
	s.manager, s.applying = wo.fieldManager, true
	return a, nil
}

// decodeApplyCBOR reads a CBOR apply body. CBOR has no duplicate-field
// warnings: a repeated key is refused whatever fieldValidation says, as
// upstream's decoder refuses it. The error text keeps upstream's words,
// which name YAML for every apply body.
func decodeApplyCBOR(body []byte) (map[string]any, error) {
	j, err := codec.CBORToJSON(body)
	if err != nil {
		return nil, apierr.BadRequest("error decoding YAML: " + err.Error())
	}
	v, err := schema.DecodeAny(j)
	if err != nil {
		return nil, apierr.BadRequest("error decoding YAML: " + err.Error())
	}
	switch config := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return config, nil
	}
	return nil, apierr.BadRequest("error decoding YAML: the apply configuration is not an object")
}

// decodeApplyConfig reads an apply body, YAML or JSON. Duplicate fields
// are refused (the error comes with the object, for the caller to report
// after the merge, as upstream) or warned of as fieldValidation says;
// unknown ones are left for the merge to refuse.
func decodeApplyConfig(body []byte, validation string) (map[string]any, []string, error) {
	// A JSON document, what client-go sends, is YAML that the JSON
	// decoder reads the same and several times faster; YAML proper, and
	// a JSON body with duplicate fields, whose error text is YAML's, go
	// through the YAML decoder.
	var v any
	isJSON, dup := false, false
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' {
		var err error
		var d bool
		if v, d, err = schema.DecodeAnyDuplicates(body); err == nil && yamlReadsAlike(body, v) {
			isJSON, dup = true, d
		}
	}
	if !isJSON {
		js, err := yaml.YAMLToJSON(body)
		if err != nil {
			return nil, nil, yamlError(body, err)
		}
		if v, err = schema.DecodeAny(js); err != nil {
			return nil, nil, yamlError(body, err)
		}
	}
	config, ok := v.(map[string]any)
	switch {
	case v == nil:
		// An empty or null document is no object at all: the merge then
		// refuses its type, as upstream.
		config = map[string]any{}
	case !ok:
		return nil, nil, yamlError(body, errors.New("the apply configuration is not an object"))
	}
	var warnings []string
	if (validation == validationStrict || validation == validationWarn) && (dup || !isJSON) {
		if err := yaml.UnmarshalStrict(body, &map[string]any{}); err != nil {
			if validation == validationStrict {
				return config, nil, apierr.BadRequest("error strict decoding YAML: " + err.Error())
			}
			warnings = append(warnings, yamlWarnings(err)...)
		}
	}
	return config, warnings, nil
}

// yamlWarnings splits a YAML decoding error into one warning per problem
// ("line 4: key \"x\" already set in map"), as upstream warns.
func yamlWarnings(err error) []string {
	text := err.Error()
	const marker = "unmarshal errors:\n"
	i := strings.Index(text, marker)
	if i < 0 {
		return []string{text}
	}
	var out []string
	for _, line := range strings.Split(text[i+len(marker):], "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// yamlError is the 400 of a body upstream's YAML decoder cannot read
// into an object, in that decoder's words ("error converting YAML to
// JSON: ...", "error unmarshaling JSON: ..."); fallback when it reads
// the body.
func yamlError(body []byte, fallback error) error {
	err := yaml.Unmarshal(body, &map[string]any{})
	if err == nil {
		err = fallback
	}
	return apierr.BadRequest("error decoding YAML: " + err.Error())
}

// yamlReadsAlike says whether the YAML decoder, upstream's, reads the
// JSON document doc, decoded as v, as the JSON decoder did. Compact
// one-line JSON, what clients send, is read alike unless it holds a
// character YAML refuses (invalid UTF-8, control characters) or folds
// (U+0085, U+2028, U+2029), a \u escape of a UTF-16 surrogate (refused,
// even as a valid pair), a \/ escape (unknown to YAML), a member name
// past YAML's 1024-character key limit, or a number beyond float64
// (read as a string). Tabs and inner line breaks, which YAML may read as
// indentation or key breaks, also leave doc to the YAML decoder.
func yamlReadsAlike(doc []byte, v any) bool {
	if bytes.IndexByte(doc, '\t') >= 0 {
		return false
	}
	inner := bytes.TrimSpace(doc)
	if bytes.ContainsAny(inner, "\r\n") {
		return false
	}
	for i := 0; i < len(inner); {
		r, n := utf8.DecodeRune(inner[i:])
		if !yamlPlain(r, n) {
			return false
		}
		if r == '\\' && i+1 < len(inner) {
			next := inner[i+1]
			if next == '/' || next == 'u' && i+3 < len(inner) && inner[i+2]|0x20 == 'd' && strings.IndexByte("89abcdefABCDEF", inner[i+3]) >= 0 {
				return false
			}
			n++ // the escaped character is not itself an escape
		}
		i += n
	}
	return plainValue(v)
}

// yamlPlain says whether YAML reads the character r (n bytes of UTF-8)
// in a quoted string as itself.
func yamlPlain(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return false
	case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xd7ff && r != 0x2028 && r != 0x2029,
		r >= 0xe000 && r <= 0xfffd, r >= 0x10000 && r <= 0x10ffff:
		return true
	}
	return false
}

// maxYAMLKey is the longest member name yamlReadsAlike trusts YAML to
// read as a key: YAML refuses a key whose ':' comes more than 1024
// characters after its start.
const maxYAMLKey = 1000

// plainValue says whether a decoded value holds no infinite number and
// no member name longer than maxYAMLKey characters.
func plainValue(v any) bool {
	switch x := v.(type) {
	case float64:
		return !math.IsInf(x, 0)
	case map[string]any:
		for k, e := range x {
			if len(k) > maxYAMLKey && utf8.RuneCountInString(k) > maxYAMLKey || !plainValue(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !plainValue(e) {
				return false
			}
		}
	}
	return true
}

// applyObject merges config into the addressed object, creating it when
// it does not exist, and returns the stored bytes and status code.
func (h *Handler) applyObject(ctx context.Context, s *scope, a applyRequest) ([]byte, int, error) {
	d, config, force, dryRun := s.d, a.config, a.force, a.dryRun
	s.dryRun = dryRun
	warned := false
	fm := h.fields(d, s.trackedAs())
	for attempt := 0; attempt < maxUpdateAttempts; attempt++ {
		kv, err := h.store.Get(s.key())
		var live Object
		switch {
		case errors.Is(err, bolt.ErrNotFound) && s.trackedAs() == "":
		case err != nil:
			return nil, 0, objectErr(s, s.name, err)
		default:
			if live, err = decodeStored(d, kv.Value); err != nil {
				return nil, 0, internalErr(err)
			}
		}
		merged, err := fm.Apply(live, config, s.manager, force)
		if err != nil {
			return nil, 0, err
		}
		if a.strict != nil {
			return nil, 0, a.strict
		}
		if !warned {
			s.warnings, warned = append(s.warnings, a.warnings...), true
		}
		merged["kind"], merged["apiVersion"] = d.Kind, d.GroupVersion()
		js, err := schema.AppendAny(nil, merged)
		if err != nil {
			return nil, 0, internalErr(err)
		}
		// The merge's result read as a body is: this encoding has no
		// duplicate members and its kind is the resource's, so the decoder
		// for the server's own bytes gives what a body's would (and on any
		// error, the body decoder's error), without tracking member paths
		// that only field validation reads, which the merge has done.
		obj, err := schema.DecodeStored(js, d.Schema)
		if err != nil {
			return nil, 0, h.cannotHandle(d.Kind, d.GroupVersion(), err.Error())
		}
		obj["kind"], obj["apiVersion"] = d.Kind, d.GroupVersion()
		// Checked in upstream's order: an identity for a new object, the
		// namespace, the name.
		if uid := metaString(obj, "uid"); uid != "" && live == nil {
			return nil, 0, apierr.Conflict(d.Group, d.Resource, s.name, "uid mismatch: the provided object specified uid "+uid+", and no existing object was found")
		}
		if err := checkNamespace(s, obj); err != nil {
			return nil, 0, err
		}
		if name := metaString(obj, "name"); name != s.name {
			return nil, 0, nameMismatch(s, name)
		}
		if live == nil {
			stored, err := h.prepareAndCreate(ctx, s, obj, dryRun)
			return stored, http.StatusCreated, err
		}
		if err := checkWriteVersion(s, metaString(obj, "resourceVersion"), kv.ModRevision); err != nil {
			return nil, 0, err
		}
		if err := h.mutateAppliedScale(ctx, s, obj, live, dryRun); err != nil {
			return nil, 0, err
		}
		next, err := h.prepareUpdate(ctx, s, obj, live)
		if err != nil {
			return nil, 0, err
		}
		stored, retry, err := h.commitUpdate(ctx, s, kv, next, dryRun)
		if retry {
			continue
		}
		return stored, http.StatusOK, err
	}
	return nil, 0, apierr.ConflictModified(d.Group, d.Resource, s.name)
}
