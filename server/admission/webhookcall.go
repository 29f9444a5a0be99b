package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"platd/security"
	"platd/server/apierr"
	"platd/server/audit"
	"platd/server/cel"
	"platd/server/registry"
	"platd/server/webhookclient"
	"platd/uuid"
)

// reviewVersions are the AdmissionReview versions sent, in the order
// a webhook's admissionReviewVersions is searched for the first known.
var reviewVersions = []string{"v1", "v1beta1"}

// callError is upstream's ErrCallingWebhook: the webhook could not be
// called or answered unusably; its failure policy decides.
type callError struct {
	webhook string
	reason  error
}

func (e *callError) Error() string {
	return fmt.Sprintf("failed calling webhook %q: %v", e.webhook, e.reason)
}

// reviewResponse is what a webhook answers.
type reviewResponse struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Response   *struct {
		UID              string            `json:"uid"`
		Allowed          bool              `json:"allowed"`
		Result           *apierr.Status    `json:"status"`
		Patch            []byte            `json:"patch"`
		PatchType        *string           `json:"patchType"`
		AuditAnnotations map[string]string `json:"auditAnnotations"`
		Warnings         []string          `json:"warnings"`
	} `json:"response"`
}

// verdict is a webhook's answer, checked.
type verdict struct {
	allowed     bool
	result      *apierr.Status
	patch       []byte
	patchType   string
	annotations map[string]string
	warnings    []string
}

// invocation is a webhook matched by a request, with the request as the
// version of its resource the webhook's rules matched.
type invocation struct {
	hook *webhook
	attr *Attributes
}

// requestState caches what matching reads once per request.
type requestState struct {
	w     *Webhooks
	cache *matchCache
	authz *cel.AdmissionAuthorizer
}

func (w *Webhooks) newRequestState(a *Attributes) *requestState {
	return &requestState{w: w, cache: newMatchCache(w.reg, w.lookup, &w.equiv, a.Descriptor)}
}

// match decides whether h is called for the request, as upstream's
// webhook matcher: the rules (through an equivalent version under
// matchPolicy Equivalent), the selectors, then the match conditions.
// It returns nil when h is not called.
func (r *requestState) match(ctx context.Context, h *webhook, a *Attributes) (*invocation, error) {
	if len(h.match.rules) == 0 {
		return nil, nil
	}
	matched, err := h.match.matches(a, r.cache.nsLabels, r.cache.equivalents)
	if err != nil {
		return nil, apierr.InternalError(err)
	}
	if matched == nil {
		return nil, nil
	}
	va, err := a.as(ctx, matched)
	if err != nil {
		return nil, err
	}
	if h.conditions != nil {
		if r.authz == nil {
			r.authz = policyAuthorizer(ctx, r.w.authz, a)
		}
		req := conditionRequest(va.request(r.w.brand.MetaGroup()))
		in := cel.AdmissionInput{Object: va.Object, OldObject: va.OldObject, Request: req, Authorizer: r.authz}
		ok, err := h.conditions.matchConditions(ctx, in)
		if err != nil {
			if h.failOpen {
				return nil, nil
			}
			d := a.Descriptor
			name := a.Name
			return nil, apierr.NewForbidden(d.Group, d.Resource, name, fmt.Sprintf("%s %q is forbidden: %v", d.GroupResource(), name, err))
		}
		if !ok {
			return nil, nil
		}
	}
	return &invocation{hook: h, attr: va}, nil
}

// review is the AdmissionReview sent for a request in version v, with
// its fresh uid.
func (w *Webhooks) review(a *Attributes, version string) (uid string, body []byte, err error) {
	req := a.request(w.brand.MetaGroup())
	uid = uuid.New()
	req["uid"] = uid
	req["object"], req["oldObject"] = objectOrNil(a.Object), objectOrNil(a.OldObject)
	if _, ok := req["options"]; !ok {
		req["options"] = nil
	}
	if _, ok := req["userInfo"]; !ok {
		req["userInfo"] = map[string]any{}
	}
	body, err = json.Marshal(map[string]any{
		"kind": "AdmissionReview", "apiVersion": w.brand.Group("admission") + "/" + version, "request": req,
	})
	return uid, body, err
}

func objectOrNil(obj registry.Object) any {
	if obj == nil {
		return nil
	}
	return obj
}

// call sends the review of inv to its webhook and checks the answer, as
// upstream's webhook call: a dry run reaches only webhooks without side
// effects; any failure to call or to read the answer is a callError.
func (w *Webhooks) call(ctx context.Context, inv *invocation, mutating bool) (*verdict, error) {
	h := inv.hook
	if inv.attr.DryRun && h.sideEffects != sideEffectsNone && h.sideEffects != sideEffectsNoneOnDryRun {
		return nil, apierr.BadRequest(fmt.Sprintf("admission webhook %q does not support dry run", h.name))
	}
	version := ""
	for _, v := range h.versions {
		if slices.Contains(reviewVersions, v) {
			version = v
			break
		}
	}
	if version == "" {
		return nil, &callError{h.name, errors.New("could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)")}
	}
	uid, body, err := w.review(inv.attr, version)
	if err != nil {
		return nil, &callError{h.name, fmt.Errorf("could not create admission objects: %w", err)}
	}
	target, err := h.client.Endpoint()
	if err != nil {
		return nil, &callError{h.name, fmt.Errorf("could not get REST client: %w", err)}
	}
	if h.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.timeout)
		defer cancel()
	}
	if deadline, ok := ctx.Deadline(); ok {
		if timeout := time.Until(deadline); timeout > 0 {
			// The webhook is told the time it has, in whole seconds
			// rounded up, as upstream.
			if t := timeout.Truncate(time.Second); t != timeout {
				timeout = t + time.Second
			}
			target = webhookclient.WithQuery(target, "timeout", timeout.String())
		}
	}
	resp, err := w.post(ctx, h, target, body)
	if err != nil {
		return nil, &callError{h.name, fmt.Errorf("failed to call webhook: %w", err)}
	}
	v, err := w.verify(uid, version, mutating, resp)
	if err != nil {
		return nil, &callError{h.name, fmt.Errorf("received invalid webhook response: %w", err)}
	}
	return v, nil
}

// post sends the review and returns the decoded answer; a status other
// than 2xx is an error with the Status the webhook gave, if any.
func (w *Webhooks) post(ctx context.Context, h *webhook, target string, body []byte) (*reviewResponse, error) {
	data, err := h.client.Post(ctx, target, body)
	if err != nil {
		return nil, err
	}
	var out reviewResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// verify checks a webhook's answer as upstream: v1 answers must carry
// the request's uid and be v1 AdmissionReviews, and only mutating
// webhooks may patch (with a patchType); v1beta1 answers are taken as
// they are.
func (w *Webhooks) verify(uid, version string, mutating bool, r *reviewResponse) (*verdict, error) {
	if r.Response == nil {
		return nil, errors.New("webhook response was absent")
	}
	res := r.Response
	v := &verdict{allowed: res.Allowed, result: res.Result, annotations: res.AuditAnnotations, warnings: res.Warnings}
	if version != "v1" {
		if mutating && len(res.Patch) > 0 {
			// v1beta1 answers name no patch type: theirs is JSONPatch.
			v.patch, v.patchType = res.Patch, patchTypeJSONPatch
		}
		return v, nil
	}
	if res.UID != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, res.UID)
	}
	want := w.brand.Group("admission") + "/v1"
	if r.APIVersion != want || r.Kind != "AdmissionReview" {
		group, ver := splitAPIVersion(r.APIVersion)
		return nil, fmt.Errorf("expected webhook response of %s, Kind=AdmissionReview, got %s/%s, Kind=%s", want, group, ver, r.Kind)
	}
	if !mutating {
		if len(res.Patch) > 0 {
			return nil, errors.New("validating webhook may not return response.patch")
		}
		if res.PatchType != nil {
			return nil, errors.New("validating webhook may not return response.patchType")
		}
		return v, nil
	}
	switch {
	case len(res.Patch) > 0 && res.PatchType == nil:
		return nil, errors.New("webhook returned response.patch but not response.patchType")
	case len(res.Patch) == 0 && res.PatchType != nil:
		return nil, errors.New("webhook returned response.patchType but not response.patch")
	case res.PatchType != nil && *res.PatchType == "":
		return nil, fmt.Errorf("webhook returned invalid response.patchType of %q", "")
	}
	v.patch = res.Patch
	if res.PatchType != nil {
		v.patchType = *res.PatchType
	}
	return v, nil
}

// patchTypeJSONPatch is the only patch type a webhook may answer.
const patchTypeJSONPatch = "JSONPatch"

// rejection is upstream's refusal of a request a webhook did not allow:
// the webhook's Status, with at least code 400, status Failure, and its
// message (or reason) after who denied it.
func rejection(name string, result *apierr.Status) error {
	st := apierr.Status{}
	if result != nil {
		st = *result
	}
	st.Kind, st.APIVersion = "Status", "v1"
	if st.Code < http.StatusBadRequest {
		st.Code = http.StatusBadRequest
	}
	if st.Status == "" || st.Status == apierr.StatusSuccess {
		st.Status = apierr.StatusFailure
	}
	deniedBy := fmt.Sprintf("admission webhook %q denied the request", name)
	switch {
	case st.Message != "":
		st.Message = deniedBy + ": " + st.Message
	case st.Reason != "":
		st.Message = deniedBy + ": " + string(st.Reason)
	default:
		st.Message = deniedBy + " without explanation"
	}
	return &apierr.Error{Status: st}
}

// outcome is what one validating webhook call came to.
type outcome struct {
	verdict *verdict
	err     error
}

// Validate calls the validating webhooks that match a write, in
// parallel as upstream: the first refusal (in calling order) refuses the
// write; warnings of every answer go to security.AddWarning on ctx and
// audit annotations to the request's audit event, in calling order.
func (w *Webhooks) Validate(ctx context.Context, a *Attributes) error {
	hooks := w.hooks(phaseValidating)
	if len(hooks) == 0 || a.Descriptor.Strategy.NoWebhookAdmission {
		return nil
	}
	st := w.newRequestState(a)
	var invs []*invocation
	for _, h := range hooks {
		inv, err := st.match(ctx, h, a)
		if err != nil {
			return err
		}
		if inv != nil {
			invs = append(invs, inv)
		}
	}
	if len(invs) == 0 {
		return nil
	}
	outs := make([]outcome, len(invs))
	var wg sync.WaitGroup
	for i, inv := range invs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := w.call(ctx, inv, false)
			outs[i] = outcome{v, err}
		}()
	}
	wg.Wait()
	var first error
	for i, o := range outs {
		h := invs[i].hook
		err := o.err
		if v := o.verdict; v != nil {
			w.publish(ctx, h, v)
			if !v.allowed {
				err = rejection(h.name, v.result)
			}
		}
		var ce *callError
		if errors.As(err, &ce) {
			if h.failOpen {
				audit.AddAnnotation(ctx, fmt.Sprintf("failed-open.validating.webhook.%s/round_0_index_%d", w.brand.Group("admission"), i), h.name)
				continue
			}
			err = apierr.InternalError(err)
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// publish passes on a webhook's warnings and audit annotations (these
// prefixed with the webhook's name).
func (w *Webhooks) publish(ctx context.Context, h *webhook, v *verdict) {
	keys := make([]string, 0, len(v.annotations))
	for k := range v.annotations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		audit.AddAnnotation(ctx, h.name+"/"+k, v.annotations[k])
	}
	for _, m := range v.warnings {
		security.AddWarning(ctx, m)
	}
}
