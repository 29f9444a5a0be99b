package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
	"platd/server/builtin"
	"platd/server/registry"
)

// Limits of spec.expirationSeconds, as upstream validates them.
const (
	minTokenSeconds = 600
	maxTokenSeconds = 1 << 32
)

// tokenRequest answers POST serviceaccounts/<name>/token: the request's
// spec defaulted and checked, a bound token signed, status filled.
func (t *saTokens) tokenRequest(b config.Brand, o config.ServiceAccountOptions) registry.Answer {
	group := b.Group("authentication")
	return func(ctx context.Context, req registry.AnswerRequest) (registry.Object, error) {
		obj := req.Object
		meta := registry.Child(obj, "metadata")
		spec := registry.Child(obj, "spec")
		seconds, ok := int64Of(spec["expirationSeconds"])
		if !ok {
			seconds = builtin.DefaultTokenSeconds
		}
		spec["expirationSeconds"] = seconds
		var errs apierr.FieldErrors
		if n, _ := meta["name"].(string); n != "" && n != req.Name {
			errs = append(errs, apierr.Invalid("metadata.name", n, "must match the service account name if specified"))
		}
		if ns, _ := meta["namespace"].(string); ns != "" && ns != req.Namespace {
			errs = append(errs, apierr.Invalid("metadata.namespace", ns, "must match the service account namespace if specified"))
		}
		if len(errs) > 0 {
			return nil, apierr.NewInvalid(group, "TokenRequest", "", errs)
		}
		auds := registry.Strings(spec["audiences"])
		if len(auds) == 0 {
			auds = slices.Clone(t.audiences)
			spec["audiences"] = registry.AnyList(auds)
		}
		now := time.Now().UTC().Truncate(time.Second)
		meta["name"], meta["namespace"], meta["creationTimestamp"] = req.Name, req.Namespace, now.Format(time.RFC3339)
		delete(obj, "status")
		if seconds < minTokenSeconds {
			errs = append(errs, apierr.Invalid("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes"))
		}
		if seconds > maxTokenSeconds {
			errs = append(errs, apierr.Invalid("spec.expirationSeconds", seconds, "may not specify a duration larger than 2^32 seconds"))
		}
		if len(errs) > 0 {
			return nil, apierr.NewInvalid(group, "TokenRequest", "", errs)
		}
		parentMeta, _ := req.Parent["metadata"].(map[string]any)
		saUID, _ := parentMeta["uid"].(string)
		bt := security.BoundToken{Namespace: req.Namespace, ServiceAccount: security.ObjectRef{Name: req.Name, UID: saUID}, Audiences: auds, Now: now}
		ref, _ := spec["boundObjectRef"].(map[string]any)
		if ref == nil {
			spec["boundObjectRef"] = nil
		} else if err := t.bind(&bt, ref, req); err != nil {
			return nil, err
		}
		if maxExp := int64(o.MaxTokenExpiration / time.Second); maxExp > 0 && seconds > maxExp {
			security.AddWarning(ctx, fmt.Sprintf("requested expiration of %d seconds shortened to %d seconds", seconds, maxExp))
			seconds = maxExp
		}
		bt.Lifetime = time.Duration(seconds) * time.Second
		if !o.NoExtendTokenExpiration && bt.Pod != nil && seconds == security.WarnOnlyTokenSeconds && allIn(auds, t.audiences) {
			extended := int64(security.ExtendedTokenSeconds)
			if maxExp := int64(o.MaxTokenExpiration / time.Second); maxExp > 0 {
				extended = max(maxExp, seconds)
			}
			bt.WarnAfter = bt.Lifetime
			bt.Lifetime = time.Duration(extended) * time.Second
		}
		token, _, err := t.signer.SignBound(bt)
		if err != nil {
			return nil, apierr.InternalError(err)
		}
		obj["status"] = map[string]any{
			"token":               token,
			"expirationTimestamp": now.Add(time.Duration(seconds) * time.Second).Format(time.RFC3339),
		}
		return obj, nil
	}
}

// bind checks spec.boundObjectRef and records the object in bt.
func (t *saTokens) bind(bt *security.BoundToken, ref map[string]any, req registry.AnswerRequest) error {
	kind, _ := ref["kind"].(string)
	apiVersion, _ := ref["apiVersion"].(string)
	name, _ := ref["name"].(string)
	uid, _ := ref["uid"].(string)
	var k security.TokenObjectKind
	resource := ""
	switch {
	case apiVersion == "v1" && kind == "Pod":
		k, resource = security.TokenPod, "pods"
	case apiVersion == "v1" && kind == "Secret":
		k, resource = security.TokenSecret, "secrets"
	case apiVersion == "v1" && kind == "Node":
		k, resource = security.TokenNode, "nodes"
	default:
		return apierr.BadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvkString(apiVersion, kind)))
	}
	ns := req.Namespace
	if k == security.TokenNode {
		ns = ""
	}
	o, err := t.objects.TokenObject(k, ns, name)
	if err != nil {
		return apierr.NotFound("", resource, name)
	}
	if uid != "" && uid != o.UID {
		return apierr.Conflict("", kind, name, fmt.Sprintf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", uid))
	}
	objRef := &security.ObjectRef{Name: name, UID: o.UID}
	switch k {
	case security.TokenPod:
		if o.ServiceAccountName != req.Name {
			return apierr.BadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", req.Name))
		}
		bt.Pod = objRef
		if o.NodeName != "" {
			bt.Node = &security.ObjectRef{Name: o.NodeName}
			if n, err := t.objects.TokenObject(security.TokenNode, "", o.NodeName); err == nil {
				bt.Node.UID = n.UID
			}
		}
	case security.TokenSecret:
		bt.Secret = objRef
	case security.TokenNode:
		bt.Node = objRef
	}
	return nil
}

// gvkString prints a kind as upstream's GroupVersionKind does:
// "apps/v1, Kind=Deployment", "/v1, Kind=ConfigMap".
func gvkString(apiVersion, kind string) string {
	gv := apiVersion
	if !containsSlash(gv) {
		gv = "/" + gv
	}
	return gv + ", Kind=" + kind
}

func containsSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

func int64Of(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// allIn reports whether every element of a is in b.
func allIn(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
