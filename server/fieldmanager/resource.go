package fieldmanager

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
	"unicode/utf8"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"platd/server/schema"
)

// Options describe the writes one Resource tracks.
type Options struct {
	// Group, Version and Kind name the served type.
	Group, Version, Kind string
	// Schema is the served type's schema.
	Schema *schema.Schema
	// Subresource is the subresource written ("" for the main resource).
	Subresource string
	// Reset are the fields, as dotted paths, a write does not own: status
	// for the main resource (written through its own subresource), what
	// a subresource keeps from the stored object for the subresource.
	Reset []string
	// Only, for a subresource, is the one top-level field its writes own.
	Only string
	// Versions are the schemas of the resource's other served versions,
	// by group/version, and Convert turns an object of version from into
	// version to. Managers recorded in another version are compared
	// there; one whose version is gone loses its entry.
	Versions map[string]*schema.Schema
	Convert  func(obj map[string]any, from, to string) (map[string]any, error)
	// LastApplied is the annotation client-side apply records its
	// configuration in, which kubectl's server-side apply migrates from.
	LastApplied string
	// Now is the clock entry times are read from.
	Now func() time.Time
}

// Resource tracks field ownership for the writes of one served version
// of a resource, on the main resource or one subresource.
type Resource struct {
	o       Options
	typ     *Type
	gv      string
	version fieldpath.APIVersion
	zero    map[string]any
	updater *merge.Updater
	strip   *fieldpath.Set
	// filter is the updater's filter of this version's sets, nil for none.
	filter fieldpath.Filter
	// pruneAlways turns off the skipped prune of Apply (see keepsApplied),
	// for tests that hold the two to the same result.
	pruneAlways bool
}

// New prepares the bookkeeping of o's writes.
func New(o Options) *Resource {
	gv := o.Version
	if o.Group != "" {
		gv = o.Group + "/" + o.Version
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &Resource{o: o, typ: TypeOf(o.Schema), gv: gv, version: fieldpath.APIVersion(gv), strip: stripSet()}
	// The object before a create is the type's zero value with its
	// null members kept: a list that is null there and set by the create
	// is not itself new, only its items are.
	zero, _ := schema.DecodeAny(schema.Encode(nil, map[string]any{}, o.Schema))
	r.zero, _ = zero.(map[string]any)
	if r.zero == nil {
		r.zero = map[string]any{}
	}
	filters := map[fieldpath.APIVersion]fieldpath.Filter{}
	for _, v := range append(keys(o.Versions), gv) {
		switch {
		case o.Only != "":
			filters[fieldpath.APIVersion(v)] = fieldpath.NewIncludeMatcherFilter(fieldpath.MakePrefixMatcherOrDie(o.Only))
		case len(o.Reset) > 0:
			set := fieldpath.NewSet()
			for _, f := range o.Reset {
				var parts []any
				for _, p := range strings.Split(f, ".") {
					parts = append(parts, p)
				}
				set.Insert(fieldpath.MakePathOrDie(parts...))
			}
			filters[fieldpath.APIVersion(v)] = fieldpath.NewExcludeSetFilter(set)
		}
	}
	r.filter = filters[r.version]
	b := merge.UpdaterBuilder{Converter: versionConverter{r}}
	if len(filters) > 0 {
		b.IgnoreFilter = filters
	}
	r.updater = b.BuildUpdater()
	return r
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// stripSet are the fields nobody owns: type and identity metadata the
// server keeps.
func stripSet() *fieldpath.Set {
	s := fieldpath.NewSet()
	for _, f := range strippedTop {
		s.Insert(fieldpath.MakePathOrDie(f))
	}
	for _, f := range strippedMeta {
		s.Insert(fieldpath.MakePathOrDie("metadata", f))
	}
	return s
}

// currentOperation is the name the write in progress owns its changes
// under before they are merged into its manager's entry: that the name
// got fields at all says the write changed something.
const currentOperation = "current-operation"

// Update records, in next's metadata.managedFields, that manager wrote
// next over live (nil on create). next's own managedFields, unless it
// is a subresource write, replaces the recorded ownership (an empty list
// resets it); an undecodable or missing one keeps live's. An object
// without ownership stays so on update, as upstream: tracking then
// starts at its next apply. A failure keeps live's entries: it never
// fails the write.
func (r *Resource) Update(live, next map[string]any, manager string) {
	nm := metadata(next)
	managed := r.requested(live, nm)
	delete(nm, "managedFields")
	if len(managed.Fields) == 0 && live != nil {
		return
	}
	if live == nil && len(managed.Fields) == 0 && r.created(next, nm, manager) {
		return
	}
	managed, err := r.update(live, next, managed, manager, false)
	if err != nil {
		if lm := metadata(live); lm["managedFields"] != nil {
			nm["managedFields"] = lm["managedFields"]
		}
		return
	}
	setManaged(nm, managed)
}

// created records the ownership of a create that starts from none, with
// the direct walk of createdFields; false leaves it to the general
// comparison (a status write's filter, an object the walk does not take).
func (r *Resource) created(next, nm map[string]any, manager string) bool {
	// A manager name that is not UTF-8 reads back changed from its
	// identifier (see ident.key); the general path records that.
	if nm == nil || r.o.Only != "" || !utf8.ValidString(manager) {
		return false
	}
	raw, ok := r.createdFields(next)
	if !ok {
		return false
	}
	if raw == nil {
		delete(nm, "managedFields")
		return true
	}
	id := ident{Manager: manager, Operation: OpUpdate, APIVersion: r.gv, Subresource: r.o.Subresource}
	nm["managedFields"] = []any{entry(id, raw, r.now())}
	return true
}

// requested is the ownership an update starts from (see Update).
func (r *Resource) requested(live map[string]any, nm map[string]any) Managed {
	if r.o.Subresource == "" {
		v, present := nm["managedFields"]
		if isReset(v, present) {
			return emptyManaged()
		}
		if list, ok := v.([]any); ok && len(list) > 0 {
			if m, err := Decode(list); err == nil && len(m.Fields) > 0 {
				return m
			}
		}
	}
	list, _ := metadata(live)["managedFields"].([]any)
	m, err := Decode(list)
	if err != nil {
		return emptyManaged()
	}
	return m
}

// update records manager's change from live (nil: none yet) to next in
// managed and returns the result. check types next against the schema
// first, for an object the server has not decoded itself; a write's new
// object was decoded with the schema, and checking it again would double
// the cost of the bookkeeping (a mismatch the comparison meets still
// fails it).
func (r *Resource) update(live, next map[string]any, managed Managed, manager string, check bool) (Managed, error) {
	if live == nil {
		live = r.zero
	}
	nt := r.typ.trusted(withoutManaged(next))
	if check {
		var err error
		if nt, err = r.typ.Typed(withoutManaged(next), typed.AllowDuplicates); err != nil {
			return managed, fmt.Errorf("failed to convert new object (%s) to smd typed: %w", r.objectName(next), err)
		}
	}
	lt := r.typ.trusted(withoutManaged(live))
	_, fields, err := r.updater.Update(lt, nt, r.version, managed.Fields, currentOperation)
	if err != nil {
		return managed, fmt.Errorf("failed to update ManagedFields (%s): %w", r.objectName(next), err)
	}
	managed.Fields = fields
	r.claim(managed, manager)
	capUpdaters(managed)
	return managed, nil
}

// claim moves what the write in progress owns into manager's Update
// entry and stamps its time.
func (r *Resource) claim(m Managed, manager string) {
	vs, ok := m.Fields[currentOperation]
	if !ok {
		return
	}
	delete(m.Fields, currentOperation)
	set := vs.Set().Difference(r.strip)
	if set.Empty() {
		return
	}
	key := ident{Manager: manager, Operation: OpUpdate, APIVersion: r.gv, Subresource: r.o.Subresource}.key()
	if prev, ok := m.Fields[key]; ok {
		set = set.Union(prev.Set())
	}
	m.Fields[key] = fieldpath.NewVersionedSet(set, r.version, false)
	m.Times[key] = r.now()
}

func (r *Resource) now() string { return r.o.Now().UTC().Format(time.RFC3339) }

// setManaged writes m into metadata nm.
func setManaged(nm map[string]any, m Managed) {
	entries, err := Encode(m)
	if err != nil || entries == nil {
		delete(nm, "managedFields")
		return
	}
	nm["managedFields"] = entries
}

// metadata returns obj's metadata map, nil when it has none.
func metadata(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	return m
}

// withType returns obj with the kind and apiVersion every configuration
// carries: stored objects lack them, and a merge must not count them as
// a change, lest a configuration applied again rewrite the object to
// refresh its manager's time.
func (r *Resource) withType(obj map[string]any) map[string]any {
	if str(obj, "kind") == r.o.Kind && str(obj, "apiVersion") == r.gv {
		return obj
	}
	out := maps.Clone(obj)
	out["kind"], out["apiVersion"] = r.o.Kind, r.gv
	return out
}

// withoutManaged is obj without metadata.managedFields, sharing
// everything else: ownership is not itself owned.
func withoutManaged(obj map[string]any) map[string]any {
	m := metadata(obj)
	if _, ok := m["managedFields"]; !ok {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	mm := make(map[string]any, len(m))
	for k, v := range m {
		if k != "managedFields" {
			mm[k] = v
		}
	}
	out["metadata"] = mm
	return out
}

// errMissingVersion says an object cannot be seen in a version the
// resource no longer serves.
var errMissingVersion = errors.New("no such version")

// converter shows objects in the version a manager recorded its fields
// in.
type versionConverter struct{ r *Resource }

func (c versionConverter) Convert(tv *typed.TypedValue, version fieldpath.APIVersion) (*typed.TypedValue, error) {
	to, from := string(version), c.r.versionOf(tv)
	if to == from {
		return tv, nil
	}
	s := c.r.schemaOf(to)
	if s == nil || c.r.o.Convert == nil || from == "" {
		return nil, errMissingVersion
	}
	obj, _ := tv.AsValue().Unstructured().(map[string]any)
	out, err := c.r.o.Convert(obj, from, to)
	if err != nil {
		return nil, err
	}
	return TypeOf(s).Typed(out)
}

// versionOf tells which served version a typed object is of.
func (r *Resource) versionOf(tv *typed.TypedValue) string {
	if tv.Schema() == r.typ.schema {
		return r.gv
	}
	for v, s := range r.o.Versions {
		if TypeOf(s).schema == tv.Schema() {
			return v
		}
	}
	return ""
}

func (r *Resource) schemaOf(gv string) *schema.Schema {
	if gv == r.gv {
		return r.o.Schema
	}
	return r.o.Versions[gv]
}

func (c versionConverter) IsMissingVersionError(err error) bool {
	return errors.Is(err, errMissingVersion)
}
