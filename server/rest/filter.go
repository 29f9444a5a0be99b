package rest

import (
	"net/http"
	"sort"

	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
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
	// reads selects every part of an object the selectors read: stored
	// objects are decoded only that far. nil when a selected field does
	// not declare what it reads. metaReads is its part of the metadata,
	// and metaSchema the stored form's schema of the metadata (nil when
	// it has none).
	reads, metaReads *schema.Selection
	metaSchema       *schema.Schema
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
	if f := storedForm(d).Schema.Field("metadata"); f != nil {
		p.metaSchema = f.Schema
	}
	p.metaReads = new(schema.Selection).Add("name").Add("namespace")
	if p.hasLabels {
		p.metaReads.Add("labels")
	}
	p.reads = new(schema.Selection).Add("metadata", "name").Add("metadata", "namespace")
	if p.hasLabels {
		p.reads.Add("metadata", "labels")
	}
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
		sel, ok := d.FieldSelectors[req.Field]
		if !ok {
			if d.OwnFieldLabels {
				return nil, apierr.BadRequest("field label not supported: " + req.Field)
			}
			return nil, apierr.BadRequest(selector.UnknownFieldError(req.Field, selectableFields(d)))
		}
		p.needObject = true
		if sel.Reads == nil {
			p.reads = nil
		}
		for _, path := range sel.Reads {
			if p.reads != nil {
				p.reads.Add(path...)
			}
		}
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

// matchesStored evaluates the predicate on stored bytes.
func (p *predicate) matchesStored(value []byte) bool {
	if p.empty() {
		return true
	}
	obj, err := p.decode(value)
	if err != nil {
		return false
	}
	return p.matchesObject(obj)
}

// decode builds what the predicate reads of a stored object: the parts it
// selects where they are known, else the whole object as served. Selectors
// on the metadata alone read only the stored metadata, which comes first
// and reads the same in a converted resource's stored form: the rest of
// the object, however large, is not scanned.
func (p *predicate) decode(value []byte) (Object, error) {
	switch {
	case !p.needObject:
		if m, err := storedMetadata(value); err == nil {
			md, err := schema.DecodeStoredSelected(m, p.metaSchema, p.metaReads)
			return Object{"metadata": md}, err
		}
		return schema.DecodeStoredSelected(value, storedForm(p.d).Schema, p.reads)
	case p.reads != nil && p.d.Storage == nil && !stale(p.d, value):
		// Converted and stale objects are changed whole after decoding.
		return schema.DecodeStoredSelected(value, p.d.Schema, p.reads)
	}
	return decodeTransient(p.d, value)
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
			if sel, ok := p.d.FieldSelectors[f]; ok {
				return sel.Get(obj), true
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
