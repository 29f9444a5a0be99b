package filters

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"platd/config"
	"platd/security"
	"platd/server/audit"
	"platd/server/validation"
)

// Impersonation headers, the same in every brand.
const (
	ImpersonateUser        = "Impersonate-User"
	ImpersonateGroup       = "Impersonate-Group"
	ImpersonateUID         = "Impersonate-Uid"
	ImpersonateExtraPrefix = "Impersonate-Extra-"
)

// serviceAccountUserPrefix starts the user name of a service account:
// "system:serviceaccount:<namespace>:<name>".
const serviceAccountUserPrefix = "system:serviceaccount:"

// verbImpersonate is the verb each impersonated attribute is authorized
// with.
const verbImpersonate = "impersonate"

// impersonation is one attribute a request asks to act as.
type impersonation struct {
	// kind is ServiceAccount, User, Group, UserExtra or UID; apiVersion is
	// set for the kinds of the authentication group.
	kind, namespace, name, apiVersion, extraKey string
}

// String prints the request as upstream's object reference does, for the
// error of impersonating without a user.
func (i impersonation) String() string {
	return fmt.Sprintf("{%s %s %s  %s  %s}", i.kind, i.namespace, i.name, i.apiVersion, i.extraKey)
}

type originalUserKey struct{}

// OriginalUserFrom returns the authenticated user of an impersonating
// request (the one audit records as acting), or nil when the request does
// not impersonate.
func OriginalUserFrom(ctx context.Context) *security.User {
	u, _ := ctx.Value(originalUserKey{}).(*security.User)
	return u
}

// Impersonate lets a request act as another user, given by the
// Impersonate-* headers, when the authenticated user may impersonate each
// of the attributes asked for (verb impersonate, checked by authz). The
// authenticated user stays on the context as OriginalUserFrom.
func Impersonate(next http.Handler, authz security.Authorizer, b config.Brand, log *slog.Logger, writeErr ErrorWriter) http.Handler {
	// User extras and UIDs are resources of the authentication group.
	authGroup := b.Group("authentication")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asks, err := ImpersonationRequests(r.Header, authGroup)
		if err != nil {
			internalError(w, r, err)
			return
		}
		if len(asks) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		requester := UserFrom(r.Context())
		if requester == nil {
			internalError(w, r, errors.New("no user found for request"))
			return
		}
		// Groups given are the whole list; otherwise a service account
		// brings its own.
		groupsGiven := len(r.Header.Values(ImpersonateGroup)) > 0
		as := &security.User{Groups: []string{}, Extra: map[string][]string{}}
		for _, ask := range asks {
			a := security.Attributes{User: requester, Verb: verbImpersonate, Namespace: ask.namespace, Name: ask.name, ResourceRequest: true}
			switch ask.kind {
			case "ServiceAccount":
				a.Resource = "serviceaccounts"
				as.Name = serviceAccountUserPrefix + ask.namespace + ":" + ask.name
				if !groupsGiven {
					as.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ask.namespace}
				}
			case "User":
				a.Resource = "users"
				as.Name = ask.name
			case "Group":
				a.Resource = "groups"
				as.Groups = append(as.Groups, ask.name)
			case "UserExtra":
				a.APIGroup, a.APIVersion, a.Resource, a.Subresource = authGroup, "v1", "userextras", ask.extraKey
				as.Extra[ask.extraKey] = append(as.Extra[ask.extraKey], ask.name)
			case "UID":
				a.APIGroup, a.APIVersion, a.Resource = authGroup, "v1", "uids"
				as.UID = ask.name
			}
			decision, reason, err := authz.Authorize(r.Context(), a)
			if err != nil || decision != security.DecisionAllow {
				log.Debug("impersonation forbidden", "uri", r.RequestURI, "reason", reason, "err", err)
				writeErr(w, r, forbidden(a, reason))
				return
			}
		}
		if as.Name != security.Anonymous {
			if !slices.Contains(as.Groups, security.AllAuthenticated) && !slices.Contains(as.Groups, security.AllUnauthenticated) {
				as.Groups = append(as.Groups, security.AllAuthenticated)
			}
		} else if !slices.Contains(as.Groups, security.AllUnauthenticated) {
			as.Groups = append(as.Groups, security.AllUnauthenticated)
		}
		log.Debug("impersonating", "user", requester.Name, "as", as.Name)
		r.Header.Del(ImpersonateUser)
		r.Header.Del(ImpersonateGroup)
		r.Header.Del(ImpersonateUID)
		for k := range r.Header {
			if strings.HasPrefix(k, ImpersonateExtraPrefix) {
				delete(r.Header, k)
			}
		}
		ctx := context.WithValue(r.Context(), originalUserKey{}, requester)
		audit.SetImpersonatedUser(ctx, as)
		next.ServeHTTP(w, r.WithContext(WithUser(ctx, as)))
	})
}

// ImpersonationRequests reads the Impersonate-* headers, in the order
// they are authorized: the user, each group, each extra value (by header
// name), the UID. Asking for groups, extras or a UID without a user is an
// error. authGroup is the authentication API group.
func ImpersonationRequests(h http.Header, authGroup string) ([]impersonation, error) {
	authV1 := authGroup + "/v1"
	var asks []impersonation
	user := h.Get(ImpersonateUser)
	if user != "" {
		if ns, name, ok := SplitServiceAccountUser(user); ok {
			asks = append(asks, impersonation{kind: "ServiceAccount", namespace: ns, name: name})
		} else {
			asks = append(asks, impersonation{kind: "User", name: user})
		}
	}
	others := false
	for _, g := range h.Values(ImpersonateGroup) {
		others = true
		asks = append(asks, impersonation{kind: "Group", name: g})
	}
	var extraHeaders []string
	for k := range h {
		if strings.HasPrefix(k, ImpersonateExtraPrefix) {
			extraHeaders = append(extraHeaders, k)
		}
	}
	slices.Sort(extraHeaders)
	for _, k := range extraHeaders {
		others = true
		key := strings.ToLower(k[len(ImpersonateExtraPrefix):])
		if u, err := url.PathUnescape(key); err == nil {
			key = u
		}
		for _, v := range h[k] {
			asks = append(asks, impersonation{kind: "UserExtra", name: v, apiVersion: authV1, extraKey: key})
		}
	}
	if uid := h.Get(ImpersonateUID); uid != "" {
		others = true
		asks = append(asks, impersonation{kind: "UID", name: uid, apiVersion: authV1})
	}
	if others && user == "" {
		return nil, fmt.Errorf("requested %v without impersonating a user", asks)
	}
	return asks, nil
}

// SplitServiceAccountUser returns the namespace and name of a service
// account's user name, or ok=false when user is not one.
func SplitServiceAccountUser(user string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(user, serviceAccountUserPrefix)
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 || len(validation.IsDNS1123Label(parts[0])) > 0 || len(validation.IsDNS1123Subdomain(parts[1])) > 0 {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// internalError answers 500 in plain text naming the request, as upstream
// answers errors of its filters, with "&", "<" and ">" HTML-escaped.
func internalError(w http.ResponseWriter, r *http.Request, err error) {
	http.Error(w, htmlEscaper.Replace(fmt.Sprintf("Internal Server Error: %q: %v", r.URL.RequestURI(), err)), http.StatusInternalServerError)
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
