package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"platd/codec"
	"platd/server/apierr"
	"platd/server/patch"
	"platd/server/registry"
	"platd/server/schema"
)

// Patch media types.
const (
	patchJSON      = "application/json-patch+json"
	patchMerge     = "application/merge-patch+json"
	patchStrategic = "application/strategic-merge-patch+json"
	patchApply     = "application/apply-patch+yaml"
)

// patchTypes are the patch bodies served today.
var patchTypes = []string{patchJSON, patchMerge, patchStrategic}

// patch serves PATCH of an object or its status subresource: the patch is
// applied to the current state and the result goes through the update
// path, retried from a fresh read when another writer wins the race.
func (h *Handler) patch(w http.ResponseWriter, r *http.Request, s *scope) {
	if h.isApply(r) {
		h.serveApply(w, r, s)
		return
	}
	out, err := h.negotiateFor(r, s.d, false)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	mt, wo, body, err := h.readPatch(r, s.d)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	s.manager, s.options = managerName(r, wo), wo.given
	d := s.d
	// A merge or strategic patch is itself decoded strictly, as upstream
	// decodes it: a member it repeats is lost in the patched object, so
	// it is found here, and reported before the patched object's own.
	var strict []string
	if (mt == patchMerge || mt == patchStrategic) && wo.fieldValidation != validationIgnore {
		if pd, err := schema.Decode(body, d.Schema); err == nil {
			for _, f := range pd.Duplicates {
				strict = append(strict, fmt.Sprintf("duplicate field %q", f))
			}
		}
	}
	for attempt := 0; attempt < maxUpdateAttempts; attempt++ {
		kv, err := h.store.Get(s.key())
		if err != nil {
			h.writeError(w, r, objectErr(s, s.name, err))
			return
		}
		served, err := servedJSON(nil, d, kv.Value)
		if err != nil {
			h.writeError(w, r, internalErr(err))
			return
		}
		current := objectJSON(nil, d, served)
		patched, left, err := h.applyPatch(mt, current, body, s)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		dec, err := h.decodeJSON(patched, s, writeOptions{fieldValidation: validationWarn})
		if err != nil {
			// A patched object of the wrong shape is the patch's fault:
			// upstream's 422 naming the patched object, not a 400 as for
			// a body sent whole.
			if _, derr := schema.Decode(patched, d.Schema); errors.Is(derr, schema.ErrType) {
				err = patchStrictError(patchedText(mt, current, body, patched, left), derr.Error())
			}
			h.writeError(w, r, err)
			return
		}
		if problems := append(slices.Clip(strict), dec.warnings...); len(problems) > 0 {
			switch wo.fieldValidation {
			case validationStrict:
				h.writeError(w, r, patchStrictError(patchedText(mt, current, body, patched, left), "strict decoding error: "+strings.Join(problems, ", ")))
				return
			case validationWarn:
				addWarnings(r.Context(), w, problems)
			}
		}
		obj := dec.obj
		if err := checkWriteVersion(s, metaString(obj, "resourceVersion"), kv.ModRevision); err != nil {
			h.writeError(w, r, err)
			return
		}
		if err := checkNamespace(s, obj); err != nil {
			h.writeError(w, r, err)
			return
		}
		if name := metaString(obj, "name"); name != s.name {
			h.writeError(w, r, nameMismatch(s, name))
			return
		}
		old, err := decodeStored(d, kv.Value)
		if err != nil {
			h.writeError(w, r, internalErr(err))
			return
		}
		s.dryRun = wo.dryRun
		next, err := h.prepareUpdate(r.Context(), s, obj, old)
		if err != nil {
			addWarnings(r.Context(), w, s.warnings)
			h.writeError(w, r, err)
			return
		}
		res, retry, err := h.commitUpdate(r.Context(), s, kv, next, wo.dryRun)
		if retry {
			continue
		}
		addWarnings(r.Context(), w, s.warnings)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		h.writeObject(w, r, out, http.StatusOK, s.d, res)
		return
	}
	h.writeError(w, r, apierr.ConflictModified(d.Group, d.Resource, s.name))
}

// isApply says whether a PATCH is a server-side apply: a YAML (or JSON)
// configuration, or a CBOR one when CBOR is served.
func (h *Handler) isApply(r *http.Request) bool {
	mt, _, err := codec.ParseContentType(r.Header.Get("Content-Type"))
	return err == nil && (mt == patchApply || h.cbor && mt == codec.ApplyCBORMediaType)
}

// readPatch reads a PATCH request: its media type, options and body.
func (h *Handler) readPatch(r *http.Request, d *registry.Descriptor) (mt string, wo writeOptions, body []byte, err error) {
	mt, _, err = codec.ParseContentType(r.Header.Get("Content-Type"))
	if err != nil || !slices.Contains(patchTypes, mt) {
		return "", wo, nil, apierr.UnsupportedMediaType("415: Unsupported Media Type", &apierr.Details{})
	}
	if mt == patchStrategic && d.NoStrategicMergePatch {
		accepted := []string{patchJSON, patchMerge, patchApply}
		if h.cbor {
			accepted = append(accepted, codec.ApplyCBORMediaType)
		}
		return "", wo, nil, apierr.UnsupportedMediaType("the body of the request was in an unknown format - accepted media types include: "+
			strings.Join(accepted, ", "), nil)
	}
	if wo, err = h.parseWriteOptions(r.URL.Query(), kindPatchOptions); err != nil {
		return "", wo, nil, err
	}
	if r.URL.Query().Has("force") {
		return "", wo, nil, h.optionsInvalid(kindPatchOptions, apierr.Forbidden("force", "may not be specified for non-apply patch"))
	}
	if body, err = readBody(r); err != nil {
		return "", wo, nil, err
	}
	if mt != patchJSON {
		var probe any
		if err := json.Unmarshal(body, &probe); err != nil {
			return "", wo, nil, apierr.BadRequest("error decoding patch: " + err.Error())
		}
	}
	return mt, wo, body, nil
}

// applyPatch applies a patch body of media type mt to the current JSON.
func (h *Handler) applyPatch(mt string, current, body []byte, s *scope) ([]byte, map[string]any, error) {
	switch mt {
	case patchJSON:
		out, err := patch.JSONPatch(current, body)
		return out, nil, err
	case patchMerge:
		out, err := patch.MergePatch(current, body)
		return out, nil, err
	case patchStrategic:
		return patch.StrategicMergeBytesLeft(current, body, s.d.Schema)
	}
	return nil, nil, apierr.UnsupportedMediaType("415: Unsupported Media Type", &apierr.Details{})
}

// patchedText is the bad value of a patch that fails strict decoding, as
// upstream quotes it: a strategic merge patch as Go prints the patch's map
// as the merge left it, a merge patch as the merged document with the
// members of the objects it opened sorted, a JSON patch as the patched
// document.
func patchedText(mt string, current, body, patched []byte, left map[string]any) string {
	switch mt {
	case patchStrategic:
		if left != nil {
			return fmt.Sprintf("%+v", left)
		}
	case patchMerge:
		if text, err := patch.MergeText(current, body); err == nil {
			return text
		}
	}
	return string(trimNewline(patched))
}

// patchStrictError is the 422 upstream returns when a patched object fails
// strict decoding: the patched object (or the patch) is the bad value.
func patchStrictError(patched string, detail string) error {
	fe := apierr.Invalid("patch", patched, detail)
	e := apierr.NewInvalid("", "", "", apierr.FieldErrors{fe})
	e.Status.Message = ` "" is invalid: ` + fe.Error()
	e.Status.Details = &apierr.Details{Causes: e.Status.Details.Causes}
	return e
}
