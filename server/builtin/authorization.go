package builtin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/selector"
	"platd/server/validation"
)

// authorizationV1 serves the access reviews: whether a user (or the
// caller) may do something, and what the caller may do in a namespace. They
// ask the server's own authorizer chain and store nothing.
func authorizationV1(b config.Brand, sv Services) []*registry.Descriptor {
	ar := accessReviews{group: b.Group("authorization"), sv: sv}
	review := func(resource, singular, kind string, namespaced bool, answer registry.Answer) *registry.Descriptor {
		d := groupType(ar.group, resource, singular, kind, namespaced)
		d.ListKind = ""
		d.Verbs = []string{registry.VerbCreate}
		d.Serve = registry.ServeAnswer
		d.Answer = answer
		return d
	}
	return []*registry.Descriptor{
		review("localsubjectaccessreviews", "localsubjectaccessreview", "LocalSubjectAccessReview", true, ar.localSubjectAccessReview),
		review("selfsubjectaccessreviews", "selfsubjectaccessreview", "SelfSubjectAccessReview", false, ar.selfSubjectAccessReview),
		review("selfsubjectrulesreviews", "selfsubjectrulesreview", "SelfSubjectRulesReview", false, ar.selfSubjectRulesReview),
		review("subjectaccessreviews", "subjectaccessreview", "SubjectAccessReview", false, ar.subjectAccessReview),
	}
}

// accessReviews answers the reviews of one authorization group.
type accessReviews struct {
	group string
	sv    Services
}

// invalid is upstream's 422 for a review: it names the group and an empty
// kind and name, because the decoded review it validates carries no kind.
func (ar accessReviews) invalid(errs apierr.FieldErrors) error {
	return apierr.NewInvalid(ar.group, "", "", errs)
}

// authorizer is the chain reviews ask; a server without one answers as
// one that allows everything.
func (ar accessReviews) authorizer() security.Chain {
	if ar.sv.Authorizer == nil {
		return security.NewChain(security.AlwaysAllow{})
	}
	return ar.sv.Authorizer
}

// subjectAccessReview says whether the user the spec describes may do what
// it asks. The user is exactly the spec's: no group is added.
func (ar accessReviews) subjectAccessReview(ctx context.Context, req registry.AnswerRequest) (registry.Object, error) {
	sar := req.Object
	spec := mapAt(sar, "spec")
	errs := validateAccessReviewSpec(spec, true)
	if !metaEmpty(mapAt(sar, "metadata")) {
		errs = append(errs, apierr.Invalid("metadata", metaValue(sar), "must be empty"))
	}
	if len(errs) > 0 {
		return nil, ar.invalid(errs)
	}
	ar.decide(ctx, sar, specUser(spec))
	return sar, nil
}

// localSubjectAccessReview is a SubjectAccessReview confined to the
// namespace of its URL.
func (ar accessReviews) localSubjectAccessReview(ctx context.Context, req registry.AnswerRequest) (registry.Object, error) {
	lsar := req.Object
	spec := mapAt(lsar, "spec")
	ns := str(lsar, "metadata", "namespace")
	errs := validateAccessReviewSpec(spec, true)
	if !metaEmpty(mapAt(lsar, "metadata"), "namespace") {
		errs = append(errs, apierr.Invalid("metadata", metaValue(lsar), "must be empty except for namespace"))
	}
	if ra := mapAt(spec, "resourceAttributes"); ra != nil && str(ra, "namespace") != ns {
		errs = append(errs, apierr.Invalid("spec.resourceAttributes.namespace", str(ra, "namespace"), "must match metadata.namespace"))
	}
	if nra := mapAt(spec, "nonResourceAttributes"); nra != nil {
		errs = append(errs, apierr.Invalid("spec.nonResourceAttributes", nonResourceValue(nra), "disallowed on this kind of request"))
	}
	if len(errs) > 0 {
		return nil, ar.invalid(errs)
	}
	if req.Namespace == "" {
		return nil, apierr.BadRequest("namespace is required on this type: ")
	}
	if req.Namespace != ns {
		return nil, apierr.BadRequest("spec.resourceAttributes.namespace must match namespace: " + req.Namespace)
	}
	ar.decide(ctx, lsar, specUser(spec))
	return lsar, nil
}

// selfSubjectAccessReview says whether the caller, as authenticated and
// impersonated, may do what the spec asks.
func (ar accessReviews) selfSubjectAccessReview(ctx context.Context, req registry.AnswerRequest) (registry.Object, error) {
	ssar := req.Object
	errs := validateAccessReviewSpec(mapAt(ssar, "spec"), false)
	if !metaEmpty(mapAt(ssar, "metadata")) {
		errs = append(errs, apierr.Invalid("metadata", metaValue(ssar), "must be empty"))
	}
	if len(errs) > 0 {
		return nil, ar.invalid(errs)
	}
	if !req.HasUser {
		return nil, apierr.BadRequest("no user present on request")
	}
	ar.decide(ctx, ssar, requester(req.Who))
	return ssar, nil
}

// selfSubjectRulesReview lists what the caller may do in the spec's
// namespace: every authorizer's rules, in chain order. The answer is a new
// review that does not echo the request.
func (ar accessReviews) selfSubjectRulesReview(ctx context.Context, req registry.AnswerRequest) (registry.Object, error) {
	if !req.HasUser {
		return nil, apierr.BadRequest("no user present on request")
	}
	ns := str(req.Object, "spec", "namespace")
	if ns == "" {
		return nil, apierr.BadRequest("no namespace on request")
	}
	rules, incomplete, err := ar.authorizer().RulesFor(ctx, requester(req.Who), ns)
	resource := make([]any, 0, len(rules.Resource))
	for _, r := range rules.Resource {
		rule := map[string]any{"verbs": toAnyList(r.Verbs)}
		setList(rule, "apiGroups", r.APIGroups)
		setList(rule, "resources", r.Resources)
		setList(rule, "resourceNames", r.ResourceNames)
		resource = append(resource, rule)
	}
	nonResource := make([]any, 0, len(rules.NonResource))
	for _, r := range rules.NonResource {
		rule := map[string]any{"verbs": toAnyList(r.Verbs)}
		setList(rule, "nonResourceURLs", r.NonResourceURLs)
		nonResource = append(nonResource, rule)
	}
	status := map[string]any{"resourceRules": resource, "nonResourceRules": nonResource, "incomplete": incomplete}
	if err != nil {
		status["evaluationError"] = err.Error()
	}
	return registry.Object{"metadata": map[string]any{"creationTimestamp": nil}, "spec": map[string]any{}, "status": status}, nil
}

// setList sets m[key] to l when l is not empty.
func setList(m map[string]any, key string, l []string) {
	if len(l) > 0 {
		m[key] = toAnyList(l)
	}
}

// decide asks the chain about the review's attributes for u and fills the
// review's status: allowed always, denied only when an authorizer denied.
func (ar accessReviews) decide(ctx context.Context, review registry.Object, u *security.User) {
	spec := mapAt(review, "spec")
	a, selectorErrs := reviewAttributes(spec, u)
	d, reason, err := ar.authorizer().Authorize(ctx, a)
	status := map[string]any{"allowed": d == security.DecisionAllow}
	if d == security.DecisionDeny {
		status["denied"] = true
	}
	if reason != "" {
		status["reason"] = reason
	}
	var evalErrs []string
	if err != nil {
		evalErrs = append(evalErrs, err.Error())
	}
	if msg := strings.Join(append(evalErrs, selectorErrs...), "; "); msg != "" {
		status["evaluationError"] = msg
	}
	review["status"] = status
}

// specUser is the user a SubjectAccessReview's spec describes.
func specUser(spec map[string]any) *security.User {
	u := &security.User{Name: str(spec, "user"), UID: str(spec, "uid"), Groups: stringsOf(listAt(spec, "groups"))}
	if len(u.Groups) == 0 {
		u.Groups = nil
	}
	if extra := mapAt(spec, "extra"); len(extra) > 0 {
		u.Extra = make(map[string][]string, len(extra))
		for k, v := range extra {
			l, _ := v.([]any)
			u.Extra[k] = stringsOf(l)
		}
	}
	return u
}

// requester is the caller as a security.User.
func requester(who registry.Requester) *security.User {
	return &security.User{Name: who.Name, UID: who.UID, Groups: who.Groups, Extra: who.Extra}
}

// reviewAttributes turns a review's spec into the attributes authorizers
// judge. An empty version asks about every version. A selector that does
// not parse, in whole or in part, is left out (asking more broadly, never
// less) and reported in the returned messages.
func reviewAttributes(spec map[string]any, u *security.User) (security.Attributes, []string) {
	ra := mapAt(spec, "resourceAttributes")
	if ra == nil {
		nra := mapAt(spec, "nonResourceAttributes")
		return security.Attributes{User: u, Path: str(nra, "path"), Verb: str(nra, "verb")}, nil
	}
	a := security.Attributes{
		User: u, ResourceRequest: true, Verb: str(ra, "verb"), Namespace: str(ra, "namespace"),
		APIGroup: str(ra, "group"), APIVersion: str(ra, "version"), Resource: str(ra, "resource"),
		Subresource: str(ra, "subresource"), Name: str(ra, "name"),
	}
	if a.APIVersion == "" {
		a.APIVersion = "*"
	}
	var msgs []string
	report := func(which string, kept int, failed bool) {
		switch {
		case failed && kept > 0:
			msgs = append(msgs, "spec.resourceAttributes."+which+" partially ignored due to parse error")
		case failed:
			msgs = append(msgs, "spec.resourceAttributes."+which+" ignored due to parse error")
		}
	}
	if fs := mapAt(ra, "fieldSelector"); fs != nil {
		var failed bool
		a.FieldSelector, failed = fieldRequirements(fs)
		report("fieldSelector", len(a.FieldSelector), failed)
	}
	if ls := mapAt(ra, "labelSelector"); ls != nil {
		var failed bool
		a.LabelSelector, failed = labelRequirements(ls)
		report("labelSelector", len(a.LabelSelector), failed)
	}
	return a, msgs
}

// fieldRequirements reads a review's field selector: the raw selector
// parsed, or the requirements, of which field selectors can express only In
// and NotIn with one value. failed says some part was left out.
func fieldRequirements(fs map[string]any) (reqs []security.SelectorRequirement, failed bool) {
	if raw := str(fs, "rawSelector"); raw != "" {
		parsed, err := selector.ParseFields(raw)
		if err != nil {
			return nil, true
		}
		reqs = parsed.AuthzRequirements()
	}
	for _, r := range listAt(fs, "requirements") {
		m, _ := r.(map[string]any)
		op, values := str(m, "operator"), stringsOf(listAt(m, "values"))
		if len(values) != 1 || (op != selectorOpIn && op != selectorOpNotIn) {
			failed = true
			continue
		}
		reqs = append(reqs, security.SelectorRequirement{Key: str(m, "key"), Operator: op, Values: values})
	}
	return reqs, failed
}

// labelRequirements reads a review's label selector: the raw selector
// parsed, or the requirements, each kept when its operator is known and
// its key and values are valid label syntax. failed says some part was
// left out.
func labelRequirements(ls map[string]any) (reqs []security.SelectorRequirement, failed bool) {
	if raw := str(ls, "rawSelector"); raw != "" {
		parsed, err := selector.ParseLabels(raw)
		if err != nil {
			return nil, true
		}
		reqs = parsed.AuthzRequirements()
	}
	for _, r := range listAt(ls, "requirements") {
		m, _ := r.(map[string]any)
		op, key, values := str(m, "operator"), str(m, "key"), stringsOf(listAt(m, "values"))
		ok := len(validation.IsQualifiedName(key)) == 0
		switch op {
		case selectorOpIn, selectorOpNotIn:
			ok = ok && len(values) > 0
		case selectorOpExists, selectorOpDoesNotExist:
			ok = ok && len(values) == 0
		default:
			ok = false
		}
		for _, v := range values {
			ok = ok && len(validation.IsValidLabelValue(v)) == 0
		}
		if !ok {
			failed = true
			continue
		}
		var vs []string
		if len(values) > 0 {
			vs = slices.Compact(slices.Sorted(slices.Values(values)))
		}
		reqs = append(reqs, security.SelectorRequirement{Key: key, Operator: op, Values: vs})
	}
	return reqs, failed
}

// validateAccessReviewSpec checks an access review's spec: exactly one kind
// of attributes, a subject when the review names one (withUser), and the
// selectors' shape. Unknown selector operators pass, so that a newer
// client's review is still answered.
func validateAccessReviewSpec(spec map[string]any, withUser bool) apierr.FieldErrors {
	var errs apierr.FieldErrors
	ra, nra := mapAt(spec, "resourceAttributes"), mapAt(spec, "nonResourceAttributes")
	if ra != nil && nra != nil {
		errs = append(errs, apierr.Invalid("spec.nonResourceAttributes", nonResourceValue(nra), "cannot be specified in combination with resourceAttributes"))
	}
	if ra == nil && nra == nil {
		errs = append(errs, apierr.Invalid("spec.resourceAttributes", nil, "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
	}
	if withUser && str(spec, "user") == "" && len(listAt(spec, "groups")) == 0 {
		errs = append(errs, apierr.Invalid("spec.user", "", "at least one of user or group must be specified"))
	}
	if ra == nil {
		return errs
	}
	for _, which := range []string{"fieldSelector", "labelSelector"} {
		sel := mapAt(ra, which)
		if sel == nil {
			continue
		}
		p := "spec.resourceAttributes." + which
		raw, reqs := str(sel, "rawSelector"), listAt(sel, "requirements")
		if raw != "" && len(reqs) > 0 {
			errs = append(errs, apierr.Invalid(p+".rawSelector", raw, "may not specified at the same time as requirements"))
		}
		if raw == "" && len(reqs) == 0 {
			errs = append(errs, apierr.Required(p+".requirements", "when "+p+" is specified, requirements or rawSelector is required"))
		}
		for i, r := range reqs {
			m, _ := r.(map[string]any)
			rp := index(p+".requirements", i)
			if which == "labelSelector" {
				errs = append(errs, validateRequirement(m, rp, validateLabelName(str(m, "key"), rp+".key"))...)
				for j, v := range listAt(m, "values") {
					s, _ := v.(string)
					for _, msg := range validation.IsValidLabelValue(s) {
						errs = append(errs, apierr.Invalid(index(rp+".values", j), s, msg))
					}
				}
				continue
			}
			var keyErrs apierr.FieldErrors
			if str(m, "key") == "" {
				keyErrs = apierr.FieldErrors{apierr.Required(rp+".key", "must be specified")}
			}
			errs = append(errs, append(keyErrs, validateRequirement(m, rp, nil)...)...)
		}
	}
	return errs
}

// validateRequirement checks a selector requirement's values against its
// operator, followed by keyErrs (upstream checks a label key after the
// operator). Unknown operators pass.
func validateRequirement(m map[string]any, p string, keyErrs apierr.FieldErrors) apierr.FieldErrors {
	var errs apierr.FieldErrors
	values := listAt(m, "values")
	switch str(m, "operator") {
	case selectorOpIn, selectorOpNotIn:
		if len(values) == 0 {
			errs = append(errs, apierr.Required(p+".values", "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case selectorOpExists, selectorOpDoesNotExist:
		if len(values) > 0 {
			errs = append(errs, apierr.Forbidden(p+".values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	}
	return append(errs, keyErrs...)
}

// nonResourceValue prints non-resource attributes as upstream prints the
// bad value.
func nonResourceValue(nra map[string]any) goSyntax {
	return goSyntax(fmt.Sprintf("authorization.NonResourceAttributes{Path:%q, Verb:%q}", str(nra, "path"), str(nra, "verb")))
}

// metaEmpty reports whether metadata holds nothing but managed fields (which
// every write records) and the keys allowed: null, "", 0, false and empty
// maps and lists count as absent, as they decode to the zero ObjectMeta.
func metaEmpty(meta map[string]any, allowed ...string) bool {
	for k, v := range meta {
		if k == "managedFields" || slices.Contains(allowed, k) {
			continue
		}
		if !zeroValue(v) {
			return false
		}
	}
	return true
}

func zeroValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	n, ok := intOf(v)
	return ok && n == 0
}

// metaValue prints a review's metadata, without its managed fields, as the
// bad value of a metadata error.
func metaValue(obj registry.Object) goSyntax {
	meta := map[string]any{}
	for k, v := range mapAt(obj, "metadata") {
		if k != "managedFields" && !zeroValue(v) {
			meta[k] = v
		}
	}
	return goSyntax(fmt.Sprintf("%#v", meta))
}
