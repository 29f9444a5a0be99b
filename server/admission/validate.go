package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"platd/security"
	"platd/server/apierr"
	"platd/server/audit"
	"platd/server/cel"
	"platd/server/registry"
)

// maxAuditAnnotationValueLength bounds a published audit annotation
// value, as upstream.
const maxAuditAnnotationValueLength = 10 * 1024

// decision is what one validation (or a failure) says of a request.
type decision struct {
	deny    bool // false: admit
	err     bool // the decision comes from a failure
	message string
	reason  apierr.Reason
}

// denial is a decision that denies, with the policy and binding behind
// it (binding nil for a policy's configuration error).
type denial struct {
	decision
	policy  string
	binding string
}

// Validate runs the policies that apply to a write: it returns the
// refusal of the first denial (as upstream's admission plugin words it),
// passes the warnings of Warn bindings to security.AddWarning on ctx and
// records audit annotations on the request's audit event.
func (p *Policies) Validate(ctx context.Context, a *Attributes) error {
	if a.Descriptor.Strategy.NoPolicyAdmission {
		return nil
	}
	hooks := p.snapshot()
	if len(hooks) == 0 {
		return nil
	}
	var denied []denial
	configError := func(pol *policy, b *binding, err error) {
		switch pol.failurePolicy {
		case failurePolicyIgnore:
			return
		case failurePolicyFail:
			what := "policy"
			if b != nil {
				what = "binding"
			}
			d := denial{decision: decision{deny: true, message: fmt.Sprintf("failed to configure %s: %v", what, err)}, policy: pol.name}
			if b != nil {
				d.binding = b.name
			}
			denied = append(denied, d)
		default:
			denied = append(denied, denial{decision: decision{deny: true, message: fmt.Sprintf("unrecognized failure policy: '%v'", pol.failurePolicy)}, policy: pol.name})
		}
	}
	// The namespaces and equivalent resources matching reads, looked up
	// once for all the policies and bindings.
	cache := newMatchCache(p.reg, p.lookup, &p.equiv, a.Descriptor)
	// The request as each matched version sees it, and the authorizer.
	versioned := map[*registry.Descriptor]*Attributes{}
	requests := map[*registry.Descriptor]map[string]any{}
	condRequests := map[*registry.Descriptor]map[string]any{}
	var authz *cel.AdmissionAuthorizer
	for _, h := range hooks {
		pol := h.policy
		if pol.match == nil {
			continue
		}
		matched, err := pol.match.matches(a, cache.nsLabels, cache.equivalents)
		if err != nil {
			configError(pol, nil, err)
			continue
		}
		if matched == nil {
			continue
		}
		var paramD *registry.Descriptor
		if pol.paramKind != nil {
			if paramD = p.reg.ByKind(pol.paramKind.group, pol.paramKind.version, pol.paramKind.kind); paramD == nil {
				configError(pol, nil, fmt.Errorf("failed to find resource referenced by paramKind: '%v'", pol.paramKind))
				continue
			}
		}
		va := versioned[matched]
		if va == nil {
			if va, err = a.as(ctx, matched); err != nil {
				return err
			}
			versioned[matched] = va
			requests[matched] = va.request(p.brand.MetaGroup())
			condRequests[matched] = conditionRequest(requests[matched])
		}
		request, condRequest := requests[matched], condRequests[matched]
		if authz == nil {
			authz = p.authorizer(ctx, a)
		}
		annotations := newAnnotationCollector()
		for _, b := range h.bindings {
			if b.match != nil {
				m, err := b.match.matches(a, cache.nsLabels, cache.equivalents)
				if err != nil {
					configError(pol, b, err)
					continue
				}
				if m == nil {
					continue
				}
			}
			params, err := p.collectParams(pol, paramD, b, a.namespace())
			if err != nil {
				configError(pol, b, err)
				continue
			}
			var ns map[string]any
			if name := a.Namespace; name != "" && !a.Descriptor.IsNamespace {
				obj, err := cache.namespace(name)
				if err != nil {
					return err
				}
				ns = namespaceObject(obj)
			}
			for _, param := range params {
				in := cel.AdmissionInput{Object: va.Object, OldObject: va.OldObject, Params: param, Request: request, Namespace: ns, Authorizer: authz}
				res := pol.validate(ctx, in, condRequest)
				for i, dec := range res.decisions {
					if !dec.deny {
						continue
					}
					for _, action := range b.actions {
						switch action {
						case actionDeny:
							denied = append(denied, denial{decision: dec, policy: pol.name, binding: b.name})
						case actionWarn:
							security.AddWarning(ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", pol.name, b.name, dec.message))
						case actionAudit:
							p.auditFailure(ctx, b, pol, i, dec)
						}
					}
				}
				for _, an := range res.annotations {
					if an.err != "" {
						denied = append(denied, denial{decision: decision{deny: true, err: true, message: an.err}, policy: pol.name, binding: b.name})
						continue
					}
					annotations.add(an.key, an.value)
				}
			}
		}
		annotations.publish(ctx, pol.name)
	}
	if len(denied) == 0 {
		return nil
	}
	return p.refusal(a, denied[0])
}

// authorizer backs the expressions' authorizer for the request's user
// (the server's own writes ask as a user without name or groups).
func (p *Policies) authorizer(ctx context.Context, a *Attributes) *cel.AdmissionAuthorizer {
	return policyAuthorizer(ctx, p.authz, a)
}

// policyAuthorizer is the expressions' authorizer for a request, backed
// by authz.
func policyAuthorizer(ctx context.Context, authz security.Authorizer, a *Attributes) *cel.AdmissionAuthorizer {
	u := a.User
	if u == nil {
		u = &security.User{}
	}
	d := a.Descriptor
	return &cel.AdmissionAuthorizer{Ctx: ctx, Authorizer: authz, User: u, Group: d.Group, Version: d.Version,
		Resource: d.Resource, Subresource: a.Subresource, Namespace: a.namespace(), Name: a.Name}
}

// refusal is upstream's answer to a denial: a Forbidden naming the
// object, with the decision's reason (Invalid by default) and its code.
func (p *Policies) refusal(a *Attributes, d denial) error {
	var message string
	if d.binding != "" {
		message = fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy, d.binding, d.message)
	} else {
		message = fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", d.policy, d.message)
	}
	desc := a.Descriptor
	name := a.RefusedName()
	e := apierr.NewForbidden(desc.Group, desc.Resource, name, fmt.Sprintf("%s %q is forbidden: %s", desc.GroupResource(), name, message))
	reason := d.reason
	if reason == "" {
		reason = apierr.ReasonInvalid
	}
	e.Status.Reason = reason
	e.Status.Code = int32(reasonCode(reason))
	e.Status.Details.Causes = append(e.Status.Details.Causes, apierr.Cause{Message: message})
	return e
}

// reasonCode is the HTTP status of a validation's reason.
func reasonCode(r apierr.Reason) int {
	switch r {
	case apierr.ReasonForbidden:
		return http.StatusForbidden
	case apierr.ReasonUnauthorized:
		return http.StatusUnauthorized
	case apierr.ReasonTooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusUnprocessableEntity
}

// auditFailure records a validation failure of an Audit binding, as
// upstream's validation_failure annotation.
func (p *Policies) auditFailure(ctx context.Context, b *binding, pol *policy, index int, dec decision) {
	type failure struct {
		Message           string   `json:"message"`
		Policy            string   `json:"policy"`
		Binding           string   `json:"binding"`
		ExpressionIndex   int      `json:"expressionIndex"`
		ValidationActions []string `json:"validationActions"`
	}
	v, _ := json.Marshal([]failure{{Message: dec.message, Policy: b.policyName, Binding: b.name, ExpressionIndex: index, ValidationActions: b.actions}})
	audit.AddAnnotation(ctx, "validation.policy."+p.brand.Group("admission")+"/validation_failure", string(v))
}

// collectParams finds the parameters a binding gives a policy: none
// needed is one nil parameter; a missing one is no evaluation at all, or
// an error when the binding says Deny.
func (p *Policies) collectParams(pol *policy, d *registry.Descriptor, b *binding, namespace string) ([]map[string]any, error) {
	ref := b.paramRef
	if pol.paramKind == nil || ref == nil {
		return []map[string]any{nil}, nil
	}
	ns := ""
	if d.Namespaced {
		ns = namespace
		if ref.namespace != "" {
			ns = ref.namespace
		} else if ns == "" {
			return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	} else if ref.namespace != "" {
		return nil, errors.New("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	}
	var params []map[string]any
	switch {
	case ref.name != "":
		obj, err := p.lookup.Get(d, ns, ref.name)
		switch {
		case err == nil:
			params = []map[string]any{withKind(obj, pol.paramKind)}
		case apierr.Code(err) == http.StatusNotFound:
		default:
			return nil, err
		}
	case ref.selector != nil:
		if ref.selectorErr != nil {
			return nil, ref.selectorErr
		}
		objs, _, err := p.lookup.List(d, ns)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if l, _ := labels(o); ref.selector.Matches(l) {
				params = append(params, withKind(o, pol.paramKind))
			}
		}
	default:
		return nil, errors.New("one of name or selector must be provided")
	}
	if len(params) == 0 && ref.denyMissing {
		return nil, errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
	}
	return params, nil
}

// withKind gives a parameter object the policy's paramKind as its kind
// and apiVersion when it has none.
func withKind(obj registry.Object, k *paramKind) map[string]any {
	if _, ok := obj["kind"]; ok {
		return obj
	}
	out := make(map[string]any, len(obj)+2)
	for key, v := range obj {
		out[key] = v
	}
	out["apiVersion"], out["kind"] = k.apiVersion, k.kind
	return out
}

// annotationCollector gathers a policy's audit annotations across its
// bindings; distinct values of one key are joined.
type annotationCollector struct {
	keys   []string
	values map[string][]string
}

func newAnnotationCollector() *annotationCollector {
	return &annotationCollector{values: map[string][]string{}}
}

func (c *annotationCollector) add(key, value string) {
	vs, seen := c.values[key]
	for _, v := range vs {
		if v == value {
			return
		}
	}
	if !seen {
		c.keys = append(c.keys, key)
	}
	c.values[key] = append(vs, value)
}

func (c *annotationCollector) publish(ctx context.Context, policy string) {
	for _, k := range c.keys {
		audit.AddAnnotation(ctx, policy+"/"+k, strings.Join(c.values[k], ", "))
	}
}
