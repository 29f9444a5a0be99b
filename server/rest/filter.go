package rest

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"platd/bolt"
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
// deletecollection; the field selector's labels are converted to the
// fields they select on as the kind's FieldLabels say.
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
	fs, err = fs.Transform(func(label string) (string, error) { return fieldOfLabel(d, label) })
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
		sel, ok := d.FieldSelectors[req.Field]
		if !ok {
			// Metadata, or a label with no field behind it.
			continue
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

// fieldOfLabel is the field a field selector's label selects on, as the
// kind's field-label conversion answers: the label itself, what an alias
// stands for, or the refusal of a label the kind does not know.
func fieldOfLabel(d *registry.Descriptor, label string) (string, error) {
	fl := d.FieldLabels
	if fl.Refusal == "" {
		if label == fieldName || label == fieldNamespace {
			return label, nil
		}
		return "", errors.New(selector.UnknownFieldError(label, []string{fieldName, fieldNamespace}))
	}
	if to, ok := fl.Aliases[label]; ok {
		return to, nil
	}
	_, selectable := d.FieldSelectors[label]
	if selectable || label == fieldName || (label == fieldNamespace && d.Namespaced) || slices.Contains(fl.Empty, label) {
		return label, nil
	}
	return "", fmt.Errorf(fl.Refusal, label)
}

// empty reports whether the predicate matches everything.
func (p *predicate) empty() bool { return !p.hasLabels && !p.hasFields }

// matchesStored evaluates the predicate on stored bytes; an object that
// cannot be read fails the selection, as upstream's store fails a list.
// The objects of a type with a Converter are selected as served: they
// must be in the version served (see selectConverted).
func (p *predicate) matchesStored(value []byte) (bool, error) {
	if p.empty() {
		return true, nil
	}
	obj, err := p.decode(value)
	if err != nil {
		return false, err
	}
	return p.matchesObject(obj), nil
}

// storeFilter is the store's filter of a list by p (nil when p selects
// everything): *failed is the first failure to read an object, after
// which the filter keeps nothing.
func (p *predicate) storeFilter(failed *error) func(kv *bolt.KV) bool {
	if p.empty() {
		return nil
	}
	return func(kv *bolt.KV) bool {
		if *failed != nil {
			return false
		}
		ok, err := p.matchesStored(kv.Value)
		if err != nil {
			*failed = fmt.Errorf("%s: %w", kv.Key, err)
		}
		return ok
	}
}

// convertsFirst reports whether objects are converted before p selects
// them: those of a type with a Converter are selected on the object as
// served, as upstream's cache of each version selects the objects it
// converted, labels a conversion sets included.
func (p *predicate) convertsFirst() bool { return !p.empty() && converter(p.d) != nil }

// selectConverted returns the items p selects, items being objects of
// p's type in its version (as convertItems returns them), in order.
func (p *predicate) selectConverted(items []storedKV) ([]storedKV, error) {
	var out []storedKV
	for _, kv := range items {
		ok, err := p.matchesStored(kv.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kv.Key, err)
		}
		if ok {
			out = append(out, kv)
		}
	}
	return out, nil
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
