package builtin

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"time"

	"platd/config"
	"platd/security"
	"platd/security/rbac"
	"platd/server/apierr"
	"platd/server/registry"
)

// Services are the parts of the running server some built-in types answer
// with. The server builds its types before them, so each is called only
// once requests are served; a nil one leaves its types answering as a
// server without that part does.
type Services struct {
	// Authenticator is the server's request authenticator, which
	// TokenReviews run their token through.
	Authenticator security.Authenticator
	// APIAudiences are the audiences a TokenReview without any checks a
	// token for (--api-audiences).
	APIAudiences []string
	// Authorizer is the server's authorizer chain, which access reviews
	// ask and rules reviews list.
	Authorizer security.Chain
	// RBAC returns the RBAC authorizer, or nil while RBAC is not an
	// authorization mode; role and binding writes are checked against the
	// writer's RBAC rules only when there is one.
	RBAC func() *rbac.Authorizer
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// PodSecurity is the PodSecurity admission plugin's configuration
	// (--admission-control-config-file); the zero value is upstream's
	// default.
	PodSecurity config.PodSecurityConfiguration
	// EventRateLimit is the EventRateLimit admission plugin's
	// configuration; nil (the plugin does not run) is no limit.
	EventRateLimit *config.EventRateLimitConfiguration
	// ImagePolicyWebhook is the ImagePolicyWebhook admission plugin's
	// configuration (--admission-control-config-file); nil (the plugin
	// does not run) reviews no image.
	ImagePolicyWebhook *config.ImagePolicyWebhookConfiguration
	// PodNodeSelector is the PodNodeSelector admission plugin's
	// configuration (--admission-control-config-file); nil is none.
	PodNodeSelector config.PodNodeSelectorConfiguration
	// PodTolerationRestriction is the PodTolerationRestriction admission
	// plugin's configuration (--admission-control-config-file); the zero
	// value is none.
	PodTolerationRestriction config.PodTolerationRestrictionConfiguration
	// Admission says which admission plugins run (--enable- and
	// --disable-admission-plugins); the zero value is upstream's default
	// set.
	Admission config.AdmissionPluginsOff
	// ForbidPrivileged refuses pods and pod templates asking for
	// privileged containers (--allow-privileged=false).
	ForbidPrivileged bool
	// OnStop, when set, registers a function to run once the server has
	// stopped serving: a plugin's connections to release.
	OnStop func(release func())
}

func (sv Services) now() time.Time {
	if sv.Now != nil {
		return sv.Now()
	}
	return time.Now()
}

// authenticationV1 serves the reviews: a TokenReview says who a token
// belongs to, a SelfSubjectReview who the caller is.
func authenticationV1(b config.Brand, sv Services) []*registry.Descriptor {
	group := b.Group("authentication")
	review := func(resource, singular, kind string, answer registry.Answer) *registry.Descriptor {
		d := groupType(group, resource, singular, kind, false)
		d.ListKind = ""
		d.Verbs = []string{registry.VerbCreate}
		d.Serve = registry.ServeAnswer
		d.Answer = answer
		return d
	}
	return []*registry.Descriptor{
		review("selfsubjectreviews", "selfsubjectreview", "SelfSubjectReview", sv.selfSubjectReview),
		review("tokenreviews", "tokenreview", "TokenReview", sv.tokenReview),
	}
}

// errBadReviewAudiences is upstream's answer when an authenticator accepts
// a token for none of the audiences asked.
var errBadReviewAudiences = errors.New("error validating audiences")

// tokenReview authenticates spec.token as a request bearing it would be,
// for spec.audiences or else the API audiences, and fills status.
func (sv Services) tokenReview(ctx context.Context, req registry.AnswerRequest) (registry.Object, error) {
	tr := req.Object
	spec := mapAt(tr, "spec")
	token, _ := spec["token"].(string)
	if token == "" {
		return nil, apierr.BadRequest("token is required for TokenReview in authentication")
	}
	if sv.Authenticator == nil {
		return tr, nil
	}
	auds := stringsOf(listAt(spec, "audiences"))
	if len(auds) == 0 {
		auds = sv.APIAudiences
	}
	// A request of its own, carrying nothing but the token: the caller's
	// connection and headers must not lend it a client certificate or a
	// proxy's identity.
	fake, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, "/", nil)
	if err != nil {
		return nil, apierr.InternalError(err)
	}
	fake.Header.Set("Authorization", "Bearer "+token)
	if len(auds) > 0 {
		fake = fake.WithContext(security.WithAudiences(fake.Context(), auds))
	}
	u, ok, err := sv.Authenticator.AuthenticateRequest(fake)
	status := map[string]any{}
	tr["status"] = status
	if ok {
		status["authenticated"] = true
	}
	if err != nil {
		status["error"] = err.Error()
	}
	if len(auds) > 0 && u != nil && len(security.IntersectAudiences(auds, u.Audiences)) == 0 {
		return nil, apierr.InternalError(errBadReviewAudiences)
	}
	status["user"] = map[string]any{}
	if u != nil {
		status["user"] = userInfo(u)
		if len(u.Audiences) > 0 {
			status["audiences"] = toAnyList(u.Audiences)
		}
	}
	return tr, nil
}

// selfSubjectReview answers with the caller, as authenticated (or
// impersonated).
func (sv Services) selfSubjectReview(_ context.Context, req registry.AnswerRequest) (registry.Object, error) {
	if !req.HasUser {
		return nil, apierr.BadRequest("no user present on request")
	}
	who := &security.User{Name: req.Who.Name, UID: req.Who.UID, Groups: req.Who.Groups, Extra: req.Who.Extra}
	return registry.Object{
		"metadata": map[string]any{"creationTimestamp": sv.now().UTC().Format(time.RFC3339)},
		"status":   map[string]any{"userInfo": userInfo(who)},
	}, nil
}

// userInfo is a user as the reviews' UserInfo.
func userInfo(u *security.User) map[string]any {
	info := map[string]any{"username": u.Name}
	if u.UID != "" {
		info["uid"] = u.UID
	}
	if len(u.Groups) > 0 {
		info["groups"] = toAnyList(u.Groups)
	}
	if len(u.Extra) > 0 {
		keys := make([]string, 0, len(u.Extra))
		for k := range u.Extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		extra := make(map[string]any, len(keys))
		for _, k := range keys {
			extra[k] = toAnyList(u.Extra[k])
		}
		info["extra"] = extra
	}
	return info
}

func toAnyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
