package fieldmanager

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"platd/server/apierr"
	"platd/server/schema"
)

// kubectlManager is the manager name of kubectl's server-side apply,
// which alone migrates an object from client-side apply.
const kubectlManager = "kubectl"

// maxAnnotationBytes bounds the annotations of an object, as upstream:
// a last-applied configuration that would take them beyond it is
// dropped, not stored.
const maxAnnotationBytes = 256 * 1024

// Apply merges config, manager's applied configuration, into live (nil
// when the object does not exist yet) and returns the object to write
// with its ownership recorded. Conflicts with other managers fail with a
// 409 unless force; a malformed configuration fails as upstream does.
// live and config are not changed.
func (r *Resource) Apply(live, config map[string]any, manager string, force bool) (map[string]any, error) {
	// Compared parsed, as upstream: "/v1" is the core group's v1.
	if got := GVKString(str(config, "apiVersion"), str(config, "kind")); got != GVKString(r.gv, r.o.Kind) {
		return nil, apierr.BadRequest("invalid object type: " + got)
	}
	if cm := metadata(config); cm != nil && cm["managedFields"] != nil {
		return nil, apierr.BadRequest("metadata.managedFields must be nil")
	}
	creating := live == nil
	if creating {
		live = r.zero
	}
	list, _ := metadata(live)["managedFields"].([]any)
	managed, err := Decode(list)
	if err != nil {
		return nil, fmt.Errorf("failed to decode managed fields: %w", err)
	}
	live = r.withType(withoutManaged(live))
	if len(managed.Fields) == 0 && !creating {
		// Ownership starts here: what the object holds is attributed to
		// a manager of its own, so that the applier conflicts with it.
		if managed, err = r.update(r.zero, live, managed, BeforeFirstApply, true); err != nil {
			return nil, fmt.Errorf("failed to create manager for existing fields: %w", err)
		}
	}
	out, err := r.apply(live, config, managed, manager, force)
	var conflicts merge.Conflicts
	if errors.As(err, &conflicts) && manager == kubectlManager {
		// kubectl migrating from client-side apply takes over the fields
		// its last-applied configuration shows it set.
		if allowed := r.lastAppliedFields(live); allowed != nil && !allowed.Empty() {
			rest := merge.Conflicts{}
			for _, c := range conflicts {
				if !allowed.Has(c.Path) {
					rest = append(rest, c)
				}
			}
			if len(rest) == 0 {
				out, err = r.apply(live, config, managed, manager, true)
			} else {
				err = rest
			}
		}
	}
	if errors.As(err, &conflicts) {
		return nil, conflictError(conflicts)
	}
	if err != nil {
		return nil, err
	}
	if manager == kubectlManager && r.o.LastApplied != "" {
		syncLastApplied(out, config, r.o.LastApplied)
	}
	setManaged(metadata(out), managed)
	return out, nil
}

// apply is one merge attempt; managed is updated in place on success.
func (r *Resource) apply(live, config map[string]any, managed Managed, manager string, force bool) (map[string]any, error) {
	lt, err := r.typ.Typed(live, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("failed to create typed live object (%s): %w", r.objectName(live), err)
	}
	ct, err := r.typ.Typed(config)
	if err != nil {
		return nil, fmt.Errorf("failed to create typed patch object (%s): %w", r.objectName(config), err)
	}
	fields := copyFields(managed.Fields)
	key := ident{Manager: manager, Operation: OpApply, Subresource: r.o.Subresource}.key()
	if r.keepsApplied(fields, key, ct) {
		// The merge prunes what the manager applied last time and applies
		// no more; with nothing to prune, its previous entry only costs
		// the pruning walks. The entry is replaced by the new set anyway.
		delete(fields, key)
	}
	nt, fields, err := r.updater.Apply(lt, ct, r.version, fields, key, force)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if nt != nil {
		out, _ = nt.AsValue().Unstructured().(map[string]any)
		managed.Times[key] = r.now()
	}
	if out == nil {
		out = schema.DeepCopy(live).(map[string]any)
	}
	if vs, ok := fields[key]; ok {
		if set := vs.Set().Difference(r.strip); set.Empty() {
			delete(fields, key)
		} else {
			fields[key] = fieldpath.NewVersionedSet(set, vs.APIVersion(), true)
		}
	}
	clear(managed.Fields)
	for k, v := range fields {
		managed.Fields[k] = v
	}
	for k := range managed.Times {
		if _, ok := managed.Fields[k]; !ok {
			delete(managed.Times, k)
		}
	}
	if metadata(out) == nil {
		out["metadata"] = map[string]any{}
	}
	return out, nil
}

// keepsApplied says whether manager's configuration ct applies every
// field its previous one did (key's entry in fields), with every entry in
// this version. Then pruning removes nothing: every path of the previous
// set, and every path above one (a configuration's field set holds the
// list items and map keys above its fields, and the named fields are
// added before pruning), is owned by the new set, and pruning removes
// only what no manager owns.
func (r *Resource) keepsApplied(fields fieldpath.ManagedFields, key string, ct *typed.TypedValue) bool {
	last, ok := fields[key]
	if !ok || r.pruneAlways {
		return false
	}
	for _, vs := range fields {
		if vs.APIVersion() != r.version {
			return false
		}
	}
	set, err := ct.ToFieldSet()
	if err != nil {
		return false
	}
	if r.filter != nil {
		set = r.filter.Filter(set)
	}
	return last.Set().Difference(set).Empty()
}

func copyFields(f fieldpath.ManagedFields) fieldpath.ManagedFields {
	out := make(fieldpath.ManagedFields, len(f))
	for k, v := range f {
		out[k] = v
	}
	return out
}

// objectName is upstream's "<namespace>/<name>; <gvk>" of error texts;
// a namespace or name the object lacks prints empty.
func (r *Resource) objectName(obj map[string]any) string {
	m := metadata(obj)
	return fmt.Sprintf("%s/%s; %s", str(m, "namespace"), str(m, "name"), GVKString(str(obj, "apiVersion"), str(obj, "kind")))
}

// GVKString prints a group/version/kind as upstream's GroupVersionKind.
// An apiVersion of more than two parts names no group, version or kind.
func GVKString(apiVersion, kind string) string {
	group, version := "", apiVersion
	switch strings.Count(apiVersion, "/") {
	case 0:
	case 1:
		group, version, _ = strings.Cut(apiVersion, "/")
	default:
		group, version, kind = "", "", ""
	}
	return group + "/" + version + ", Kind=" + kind
}

// lastAppliedFields are the fields of live's last-applied configuration
// that still hold the values it set, nil when there is none to trust.
func (r *Resource) lastAppliedFields(live map[string]any) *fieldpath.Set {
	text := str(annotations(live), r.o.LastApplied)
	if r.o.LastApplied == "" || text == "" {
		return nil
	}
	v, err := schema.DecodeAny([]byte(text))
	last, _ := v.(map[string]any)
	if err != nil || last == nil || str(last, "apiVersion") != r.gv {
		return nil
	}
	lt, err := r.typ.Typed(last)
	if err != nil {
		return nil
	}
	ct, err := r.typ.Typed(live)
	if err != nil {
		return nil
	}
	set, err := lt.ToFieldSet()
	if err != nil {
		return nil
	}
	cmp, err := lt.Compare(ct)
	if err != nil {
		return nil
	}
	return set.Difference(cmp.Modified).Difference(cmp.Added).Difference(cmp.Removed)
}

func annotations(obj map[string]any) map[string]any {
	a, _ := metadata(obj)["annotations"].(map[string]any)
	return a
}

// syncLastApplied keeps a client-side apply record current when kubectl
// applies server-side, so that a later client-side apply sees the
// configuration the object now has.
func syncLastApplied(out, config map[string]any, annotation string) {
	a := annotations(out)
	if str(a, annotation) == "" {
		return
	}
	c := schema.DeepCopy(config).(map[string]any)
	if cm := metadata(c); cm != nil {
		if ca, ok := cm["annotations"].(map[string]any); ok {
			// Emptied, the map stays: upstream records "annotations":{}.
			delete(ca, annotation)
		} else {
			delete(cm, "annotations")
		}
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return
	}
	a[annotation] = string(raw) + "\n"
	if annotationsSize(a) > maxAnnotationBytes {
		delete(a, annotation)
	}
}

// annotationsSize is what the annotations limit counts: every key and
// value.
func annotationsSize(a map[string]any) int {
	n := 0
	for k, v := range a {
		s, _ := v.(string)
		n += len(k) + len(s)
	}
	return n
}

// conflictError is the 409 of an apply that would take fields from
// other managers, in upstream's words.
func conflictError(conflicts merge.Conflicts) error {
	// structured-merge-diff lists conflicts in map order; sorted, the
	// causes come in the order the message names them.
	conflicts = slices.Clone(conflicts)
	sort.SliceStable(conflicts, func(i, j int) bool {
		if conflicts[i].Manager != conflicts[j].Manager {
			return conflicts[i].Manager < conflicts[j].Manager
		}
		return conflicts[i].Path.Compare(conflicts[j].Path) < 0
	})
	causes := make([]apierr.Cause, 0, len(conflicts))
	for _, c := range conflicts {
		causes = append(causes, apierr.Cause{Type: "FieldManagerConflict", Message: "conflict with " + printManager(c.Manager), Field: c.Path.String()})
	}
	var msg string
	if len(conflicts) == 1 {
		msg = fmt.Sprintf("Apply failed with 1 conflict: conflict with %s: %s", printManager(conflicts[0].Manager), conflicts[0].Path)
	} else {
		byManager := map[string][]string{}
		for _, c := range conflicts {
			byManager[c.Manager] = append(byManager[c.Manager], c.Path.String())
		}
		managers := keys(byManager)
		sort.Strings(managers)
		var lines []string
		for _, m := range managers {
			lines = append(lines, "conflicts with "+printManager(m)+":")
			for _, p := range byManager[m] {
				lines = append(lines, "- "+p)
			}
		}
		msg = fmt.Sprintf("Apply failed with %d conflicts: %s", len(conflicts), strings.Join(lines, "\n"))
	}
	return apierr.New(http.StatusConflict, apierr.ReasonConflict, msg, &apierr.Details{Causes: causes})
}

// printManager renders a manager identifier as conflict messages name it.
func printManager(key string) string {
	id := parseIdent(key)
	s := fmt.Sprintf("%q", id.Manager)
	if id.Subresource != "" {
		s += fmt.Sprintf(" with subresource %q", id.Subresource)
	}
	if id.Operation == OpUpdate {
		s += " using " + id.APIVersion
	}
	return s
}
