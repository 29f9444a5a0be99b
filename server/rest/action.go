package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"platd/server/apierr"
	"platd/server/registry"
)

// Actions are creates that change another object instead of storing one:
// a Binding assigns a pod to a node, an Eviction deletes a pod (evict.go).

// serveBind serves pods/binding and the bindings resource.
func (h *Handler) serveBind(w http.ResponseWriter, r *http.Request, s *scope) {
	out, wo, b, err := h.beginAction(r, "v1", "Binding", nil)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if b, err = h.mutateAction(r.Context(), w, s, b, "v1", "Binding", wo); err != nil {
		h.writeError(w, r, err)
		return
	}
	name := metaString(b, "name")
	pod := s.name
	if s.sub == "" {
		// POST .../bindings names the pod in the Binding.
		pod = name
	} else if name != s.name {
		h.writeError(w, r, apierr.BadRequest("name in URL does not match name in Binding object"))
		return
	}
	var errs apierr.FieldErrors
	target, _ := b["target"].(map[string]any)
	if k, _ := target["kind"].(string); k != "" && k != "Node" {
		errs = append(errs, apierr.NotSupported("target.kind", k, []string{"Node", "<empty>"}))
	}
	node, _ := target["name"].(string)
	if node == "" {
		errs = append(errs, apierr.Required("target.name", ""))
	}
	if len(errs) > 0 {
		h.writeError(w, r, apierr.NewInvalid("", "Binding", name, errs))
		return
	}
	if err := h.admitAction(r.Context(), w, s, name, b, "v1", "Binding", wo, wo.dryRun); err != nil {
		h.writeError(w, r, err)
		return
	}
	pods := h.actionTarget(s)
	if err := h.bindPod(r.Context(), pods, pod, node, b, wo.dryRun); err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeStatus(w, r, out, http.StatusCreated, successStatus(http.StatusCreated))
}

// actionTarget is the scope of the pods an action changes: the addressed
// resource for a pod subresource, the pods of the namespace for the
// bindings resource.
func (h *Handler) actionTarget(s *scope) *scope {
	if s.sub != "" {
		return &scope{d: s.d, info: s.info, ns: s.ns}
	}
	return &scope{d: s.d.Acts, info: s.info, ns: s.ns}
}

// beginAction reads an action's options and body, of kind in apiVersion
// or one of also.
func (h *Handler) beginAction(r *http.Request, apiVersion, kind string, also []string) (output, writeOptions, Object, error) {
	out, err := h.negotiate(r, false)
	if err != nil {
		return out, writeOptions{}, nil, err
	}
	wo, err := h.parseWriteOptions(r.URL.Query(), kindCreateOptions)
	if err != nil {
		return out, wo, nil, err
	}
	obj, err := h.decodeKind(r, apiVersion, kind, also)
	return out, wo, obj, err
}

// bindPod sets spec.nodeName of a pod that has none, merges the binding's
// annotations and marks the pod scheduled. The write bypasses the pod's
// update rules, which forbid changing its spec.
func (h *Handler) bindPod(ctx context.Context, pods *scope, name, node string, binding Object, dryRun bool) error {
	if pods.d == nil {
		return apierr.InternalError(errors.New("the binding resource names no resource it acts on (Descriptor.Acts)"))
	}
	d := pods.d
	conflict := func(msg string) error { return apierr.Conflict("", "pods/binding", name, msg) }
	key := d.Key(pods.ns, name)
	// The binding's uid and resourceVersion are preconditions of the
	// write, failed as upstream's storage fails them.
	preconditionFailed := func(msg string) error {
		return apierr.Conflict(d.Group, d.Resource, name, storageErrorText(storageInvalidObject, h.storedAt(key), msg))
	}
	uid, rv := metaString(binding, "uid"), metaString(binding, "resourceVersion")
	for attempt := 0; attempt < maxUpdateAttempts; attempt++ {
		kv, err := h.store.Get(key)
		if err != nil {
			return objectErr(pods, name, err)
		}
		pod, err := decodeStored(d, kv.Value)
		if err != nil {
			return internalErr(err)
		}
		if have := metaString(pod, "uid"); uid != "" && uid != have {
			return preconditionFailed(fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", uid, have))
		}
		if have := strconv.FormatInt(kv.ModRevision, 10); rv != "" && rv != have {
			return preconditionFailed(fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s", rv, have))
		}
		spec := childMap(pod, "spec")
		switch {
		case metaString(pod, "deletionTimestamp") != "":
			return conflict(fmt.Sprintf("pod %s is being deleted, cannot be assigned to a host", name))
		case spec["nodeName"] != nil && spec["nodeName"] != "":
			return conflict(fmt.Sprintf("pod %v is already assigned to node %q", name, spec["nodeName"]))
		case len(asList(spec["schedulingGates"])) > 0:
			return conflict(fmt.Sprintf("pod %v has non-empty .spec.schedulingGates", name))
		}
		spec["nodeName"] = node
		if ann := stringMap(meta(binding, false), "annotations"); len(ann) > 0 {
			m := meta(pod, true)
			pa := stringMap(m, "annotations")
			if pa == nil {
				pa = map[string]any{}
				m["annotations"] = pa
			}
			for k, v := range ann {
				pa[k] = v
			}
		}
		updateCondition(childMap(pod, "status"), map[string]any{"type": "PodScheduled", "status": "True"}, timestamp(h.now()))
		if dryRun {
			return nil
		}
		enc, err := encodeStored(d, pod)
		if err != nil {
			return err
		}
		if _, err := h.store.Update(ctx, key, kv.ModRevision, enc); err != nil {
			if lostRace(err) {
				continue
			}
			return objectErr(pods, name, err)
		}
		return nil
	}
	return apierr.ConflictModified("", "pods", name)
}

// updateCondition puts cond in status.conditions in place of the
// condition of its type, whole, as upstream's UpdatePodCondition does: a
// reason, message or probe time cond lacks is gone. Its transition time
// is now, or the old one when the status stays.
func updateCondition(status, cond map[string]any, now string) {
	conds := asList(status["conditions"])
	cond["lastTransitionTime"] = now
	for i, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == cond["type"] {
			if m["status"] == cond["status"] {
				cond["lastTransitionTime"] = m["lastTransitionTime"]
			}
			conds[i] = cond
			return
		}
	}
	status["conditions"] = append(conds, cond)
}

// serveComputed serves get and list of a resource whose objects are
// computed on request (component statuses).
func (h *Handler) serveComputed(w http.ResponseWriter, r *http.Request, s *scope) {
	out, err := h.negotiateFor(r, s.d, false)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	rd, err := h.newRenderer(r, s.d, out)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	pred, err := parsePredicate(s.d, q.Get("labelSelector"), q.Get("fieldSelector"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var items [][]byte
	for _, obj := range s.d.Computed(r.Context(), h.storageProbe) {
		if s.name != "" && metaString(obj, "name") != s.name {
			continue
		}
		if s.info.Verb == registry.VerbList && !pred.matchesObject(obj) {
			continue
		}
		enc, err := encodeDryRun(s.d, obj)
		if err != nil {
			h.writeError(w, r, internalErr(err))
			return
		}
		items = append(items, enc)
	}
	var body []byte
	switch s.info.Verb {
	case registry.VerbGet:
		if len(items) == 0 {
			h.writeError(w, r, apierr.NotFound(s.d.Group, s.d.Resource, s.name))
			return
		}
		body, err = rd.single(items[0])
	case registry.VerbList:
		if out.as == asMetadata {
			h.writeError(w, r, apierr.NotAcceptable(fmt.Sprintf("you requested PartialObjectMetadata, but the requested object is a list (%s)", internalType(s.d, true)), nil))
			return
		}
		kvs := make([]storedKV, len(items))
		for i, b := range items {
			kvs[i].Value = b
		}
		body, err = rd.list(listMeta{}, kvs)
	default:
		err = apierr.MethodNotSupported(s.d.Group, s.d.Resource, s.info.Verb)
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if out.format == formatProtobuf {
		h.writeProtobuf(w, r, http.StatusOK, body)
		return
	}
	h.writeJSON(w, r, out, http.StatusOK, body)
}

// childMap returns the map at obj[key], creating it when absent.
func childMap(obj map[string]any, key string) map[string]any {
	m, ok := obj[key].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj[key] = m
	}
	return m
}

func asList(v any) []any { l, _ := v.([]any); return l }
