package rest

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"platd/server/fieldmanager"
	"platd/server/registry"
	"platd/server/schema"
)

// fieldManagers holds the field manager of each resource and subresource
// written so far; they are built on first write, not at start.
type fieldManagers struct{ m sync.Map }

type fieldsKey struct {
	d   *registry.Descriptor
	sub string
}

// fields returns the field manager of d's writes through sub ("" for the
// main resource).
func (h *Handler) fields(d *registry.Descriptor, sub string) *fieldmanager.Resource {
	k := fieldsKey{d, sub}
	if r, ok := h.fieldMgrs.m.Load(k); ok {
		return r.(*fieldmanager.Resource)
	}
	o := fieldmanager.Options{Group: d.Group, Version: d.Version, Kind: d.Kind, Schema: d.Schema, Subresource: sub, Now: h.now,
		LastApplied: h.brand.LastAppliedAnnotation()}
	switch sr := d.Subresource(sub); {
	case sr != nil && sr.Keep != nil:
		// The subresource writes all but what it keeps: it owns the rest.
		o.Reset = sr.Keep
	case sub == "status":
		o.Only = "status"
	case sub == "" && d.Subresource("status") != nil:
		o.Reset = []string{"status"}
	}
	// Every version sharing the stored form, the stored version's own
	// included: its writes must see the entries recorded in the others.
	o.Versions, o.Convert = h.otherVersions(d)
	r, _ := h.fieldMgrs.m.LoadOrStore(k, fieldmanager.New(o))
	return r.(*fieldmanager.Resource)
}

// Forget drops what was built for writes of descriptors no longer
// served (a custom resource definition's replaced versions), so that they
// do not stay reachable.
func (h *Handler) Forget(ds []*registry.Descriptor) {
	for _, d := range ds {
		h.fieldMgrs.m.Range(func(k, _ any) bool {
			if k.(fieldsKey).d == d {
				h.fieldMgrs.m.Delete(k)
			}
			return true
		})
		fieldmanager.Forget(d.Schema)
	}
}

// otherVersions are the other served versions of d's stored objects, in
// its group or another (events are served by two), and the conversion
// between any two, through the stored form.
func (h *Handler) otherVersions(d *registry.Descriptor) (map[string]*schema.Schema, func(map[string]any, string, string) (map[string]any, error)) {
	byGV := map[string]*registry.Descriptor{}
	for _, x := range h.reg.All() {
		if x != d && storedForm(x) == storedForm(d) && x.Resource == d.Resource {
			byGV[x.GroupVersion()] = x
		}
	}
	versions := make(map[string]*schema.Schema, len(byGV))
	for gv, x := range byGV {
		versions[gv] = x.Schema
	}
	byGV[d.GroupVersion()] = d
	convert := func(obj map[string]any, from, to string) (map[string]any, error) {
		df, dt := byGV[from], byGV[to]
		obj = deepCopyObject(obj)
		if cv := converter(dt); cv != nil {
			obj["apiVersion"], obj["kind"] = df.GroupVersion(), df.Kind
			return cv.Convert(conversionContext(), obj, dt.GroupVersion())
		}
		if df.Storage != nil {
			obj = df.Storage.ToStorage(obj)
		}
		if dt.Storage != nil {
			obj = dt.Storage.FromStorage(obj)
		}
		return obj, nil
	}
	return versions, convert
}

// track records the write's ownership in next, the object it stores;
// live is the stored object (nil on create). Applies record theirs as they
// merge.
func (h *Handler) track(s *scope, live, next Object) {
	if s.applying {
		return
	}
	sub := s.trackedAs()
	d := s.d
	// Ownership is computed over the object as it will read back, with
	// every member its type always carries, so that a write sending fewer
	// members than the stored form does not seem to remove them.
	canon := schema.Canonical(next, d.Schema)
	h.fields(d, sub).Update(live, canon, s.manager)
	m := meta(next, true)
	if mf, ok := meta(canon, false)["managedFields"]; ok {
		m["managedFields"] = mf
	} else {
		delete(m, "managedFields")
	}
}

// trackedAs is the subresource the write's ownership is recorded under.
func (s *scope) trackedAs() string {
	if s.trackAs != "" {
		return s.trackAs
	}
	return s.sub
}

// maxManagerLength bounds a manager name taken from the User-Agent.
const maxManagerLength = 128

// managerName is the field manager a request writes as: fieldManager
// from the query, else the User-Agent's product name.
func managerName(r *http.Request, wo writeOptions) string {
	if wo.fieldManager != "" {
		return wo.fieldManager
	}
	ua := r.UserAgent()
	if i := strings.IndexByte(ua, '/'); i >= 0 {
		ua = ua[:i]
	}
	var b strings.Builder
	for _, r := range ua {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > maxManagerLength {
			break
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}

// managerKey carries the manager name of in-process writes.
type managerKey struct{}

// WithManager returns ctx whose in-process writes are recorded as
// manager's.
func WithManager(ctx context.Context, manager string) context.Context {
	return context.WithValue(ctx, managerKey{}, manager)
}

// inProcessManager is the manager of an in-process write: the one ctx
// names, else the server's.
func (h *Handler) inProcessManager(ctx context.Context) string {
	if m, ok := ctx.Value(managerKey{}).(string); ok && m != "" {
		return m
	}
	return h.brand.FieldManager
}
