package rest

import (
	"fmt"
	"net/http"
	"sync"

	"platd/security"
	"platd/server/apierr"
	"platd/server/filters"
	"platd/server/registry"
	"platd/server/schema"
)

// Answered creates store nothing: the body is decoded as the answering
// kind, handed to the resource's or subresource's Answer hook, and what it
// returns is the 201 reply (reviews, token requests). registry.Answer
// states the contract.

// answerKinds holds, per descriptor and subresource, the descriptor of the
// kind a subresource answers with: built once, so that its field manager
// is too.
type answerKinds struct{ m sync.Map }

// serveAnswer serves POST to a ServeAnswer resource or subresource.
func (h *Handler) serveAnswer(w http.ResponseWriter, r *http.Request, s *scope) {
	if s.info.Verb != registry.VerbCreate {
		h.writeError(w, r, apierr.MethodNotSupported(s.d.Group, s.d.Resource, s.info.Verb))
		return
	}
	kd, answer, err := h.answerKind(s)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	ks := &scope{d: kd, info: s.info, ns: s.ns, name: s.name, sub: s.sub}
	out, wo, dec, err := h.beginWrite(r, ks, kindCreateOptions)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if s.sub == "" {
		if err := answerNamespace(s, dec.obj); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	req := registry.AnswerRequest{Namespace: s.ns, Name: s.name, Object: dec.obj, DryRun: wo.dryRun}
	if u := filters.UserFrom(r.Context()); u != nil {
		req.HasUser = true
		req.Who = registry.Requester{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	}
	schema.ApplyDefaults(dec.obj, kd.Schema)
	if kd.Strategy.Default != nil {
		kd.Strategy.Default(dec.obj)
	}
	ks.manager = managerName(r, wo)
	h.track(ks, nil, dec.obj)
	// The admission sees the request's object before the answer reads
	// anything, as upstream admits a create before its storage acts.
	if req.Object, err = h.mutateAction(r.Context(), w, s, dec.obj, kd.GroupVersion(), kd.Kind, wo); err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := h.admitAction(r.Context(), w, s, s.name, req.Object, kd.GroupVersion(), kd.Kind, wo, wo.dryRun); err != nil {
		h.writeError(w, r, err)
		return
	}
	if s.sub != "" {
		kv, err := h.store.Get(s.key())
		if err != nil {
			h.writeError(w, r, objectErr(s, s.name, err))
			return
		}
		if req.Parent, err = decodeStored(s.d, kv.Value); err != nil {
			h.writeError(w, r, internalErr(err))
			return
		}
	}
	// A hook's warnings (security.AddWarning) join the decoder's.
	warnings := dec.warnings
	ctx := security.WithWarnings(r.Context(), func(m string) { warnings = append(warnings, m) })
	res, err := answer(ctx, req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	addWarnings(r.Context(), w, warnings)
	h.writeKind(w, r, out, http.StatusCreated, kd.GroupVersion(), kd.Kind, res, kd.Schema)
}

// answerKind returns the descriptor of the kind s answers with, and its
// hook.
func (h *Handler) answerKind(s *scope) (*registry.Descriptor, registry.Answer, error) {
	if s.sub == "" {
		if s.d.Answer == nil {
			return nil, nil, apierr.InternalError(fmt.Errorf("resource %s is served by answer but has no Answer hook", s.d.GroupResource()))
		}
		return s.d, s.d.Answer, nil
	}
	sr := s.d.Subresource(s.sub)
	if sr.Answer == nil {
		return nil, nil, apierr.InternalError(fmt.Errorf("subresource %s/%s is served by answer but has no Answer hook", s.d.GroupResource(), s.sub))
	}
	k := fieldsKey{s.d, s.sub}
	if kd, ok := h.answers.m.Load(k); ok {
		return kd.(*registry.Descriptor), sr.Answer, nil
	}
	group, version, kind := sr.Group, sr.Version, sr.Kind
	if kind == "" {
		group, version, kind = s.d.Group, s.d.Version, s.d.Kind
	}
	sch := h.kind(group, version, kind)
	if sch == nil {
		return nil, nil, apierr.InternalError(fmt.Errorf("no schema for %s/%s %s", group, version, kind))
	}
	kd := &registry.Descriptor{Group: group, Version: version, Kind: kind, Resource: s.d.Resource, Schema: sch}
	kd.Strategy.Default = sr.Default
	got, _ := h.answers.m.LoadOrStore(k, kd)
	return got.(*registry.Descriptor), sr.Answer, nil
}

// answerNamespace makes an answered object's namespace the request's, as
// upstream's create does for every resource: an object of a namespaced
// type naming none takes the URL's, one naming another is refused, and a
// cluster-scoped one loses any it names.
func answerNamespace(s *scope, obj Object) error {
	if err := checkNamespace(s, obj); err != nil {
		return err
	}
	meta, _ := obj["metadata"].(map[string]any)
	switch {
	case s.d.Namespaced && s.ns != "":
		if meta == nil {
			meta = map[string]any{}
			obj["metadata"] = meta
		}
		meta["namespace"] = s.ns
	case !s.d.Namespaced && meta != nil:
		delete(meta, "namespace")
	}
	return nil
}
