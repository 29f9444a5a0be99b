package rest

import (
	"encoding/json"
	"net/http"
	"sort"

	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/selector"
)

// Field selectors every resource supports.
const (
	fieldName      = "metadata.name"
	fieldNamespace = "metadata.namespace"
)

// predicate is a parsed label and field selector.
type predicate struct {
	d      *registry.Descriptor
	labels selector.Labels
	fields selector.Fields
	// hasLabels and hasFields say which selectors constrain anything.
	hasLabels, hasFields bool
	// needObject is set when a field selector reads beyond metadata.
	needObject bool
}

// parsePredicate validates the selectors of a list, watch or
// deletecollection against the descriptor's selectable fields.
func parsePredicate(d *registry.Descriptor, labelSel, fieldSel string) (*predicate, error) {
	p := &predicate{d: d}
	ls, err := selector.ParseLabels(labelSel)
	if err != nil {
		return nil, apierr.BadRequest(err.Error())
	}
	p.labels, p.hasLabels = ls, !ls.Empty()
	fs, err := selector.ParseFields(fieldSel)
	if err != nil {
		return nil, apierr.BadRequest(err.Error())
	}
	p.fields = fs
	for _, req := range fs.Requirements() {
		p.hasFields = true
		switch req.Field {
		case fieldName:
			continue
		case fieldNamespace:
			if !d.OwnFieldLabels || d.Namespaced {
				continue
			}
		}
		if _, ok := d.FieldSelectors[req.Field]; !ok {
			if d.OwnFieldLabels {
				return nil, apierr.BadRequest("field label not supported: " + req.Field)
			}
			return nil, apierr.BadRequest(selector.UnknownFieldError(req.Field, selectableFields(d)))
		}
		p.needObject = true
	}
	return p, nil
}

// selectableFields lists a descriptor's selectable fields in the order the
// unknown-field error names them.
func selectableFields(d *registry.Descriptor) []string {
	out := []string{fieldName, fieldNamespace}
	var extra []string
	for f := range d.FieldSelectors {
		extra = append(extra, f)
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// empty reports whether the predicate matches everything.
func (p *predicate) empty() bool { return !p.hasLabels && !p.hasFields }

// storedMeta is the part of a stored object selectors read.
type storedMeta struct {
	Metadata struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
}

// matchesStored evaluates the predicate on stored bytes.
func (p *predicate) matchesStored(value []byte) bool {
	if p.empty() {
		return true
	}
	if p.needObject {
		obj, err := decodeTransient(p.d, value)
		if err != nil {
			return false
		}
		return p.matchesObject(obj)
	}
	var m storedMeta
	// Only the metadata member is unmarshalled when it comes first, as it
	// does in stored objects: the rest need not be scanned.
	if md, err := storedMetadata(value); err == nil {
		if err := json.Unmarshal(md, &m.Metadata); err != nil {
			return false
		}
	} else if err := json.Unmarshal(value, &m); err != nil {
		return false
	}
	if p.hasLabels && !p.labels.Matches(m.Metadata.Labels) {
		return false
	}
	if p.hasFields {
		return p.fields.Matches(func(f string) (string, bool) {
			switch f {
			case fieldName:
				return m.Metadata.Name, true
			case fieldNamespace:
				return m.Metadata.Namespace, true
			}
			return "", false
		})
	}
	return true
}

// matchesObject evaluates the predicate on a decoded object.
func (p *predicate) matchesObject(obj Object) bool {
	if p.empty() {
		return true
	}
	md := meta(obj, false)
	if p.hasLabels {
		labels := map[string]string{}
		for k, v := range stringMap(md, "labels") {
			s, _ := v.(string)
			labels[k] = s
		}
		if !p.labels.Matches(labels) {
			return false
		}
	}
	if p.hasFields {
		return p.fields.Matches(func(f string) (string, bool) {
			switch f {
			case fieldName, fieldNamespace:
				s, _ := md[f[len("metadata."):]].(string)
				return s, true
			}
			if get, ok := p.d.FieldSelectors[f]; ok {
				return get(obj), true
			}
			return "", false
		})
	}
	return true
}

// beginRead is the common start of list and watch: the response encoding,
// the list options and the selectors.
func (h *Handler) beginRead(r *http.Request, s *scope, watch bool) (output, *listOptions, *predicate, error) {
	out, err := h.negotiateFor(r, s.d, watch)
	if err != nil {
		return out, nil, nil, err
	}
	o, err := h.parseListOptions(r.URL.Query(), watch)
	if err != nil {
		return out, nil, nil, err
	}
	pred, err := parsePredicate(s.d, o.labelSelector, o.fieldSelector)
	return out, o, pred, err
}
