package aggregator

import (
	"context"
	"io"
	"net/http"
	"net/http/httputil"
	"slices"
	"strings"

	"platd/security"
	"platd/server/registry"
)

// The plain-text answers of the proxy, upstream's words.
const (
	msgUnavailable = "service unavailable"
	msgMissingUser = "missing user"
	msgRedirect    = "the backend attempted to redirect this request, which is not permitted"
)

// Proxy forwards r to the extension server of the APIService as (which
// names a service), as user u: authentication and authorization have
// run. An APIService that is not Available, an endpoint that cannot be
// resolved and a server that cannot be reached all answer 503 in plain
// text, as upstream's aggregator does.
func (a *Aggregator) Proxy(w http.ResponseWriter, r *http.Request, as registry.Object, u *security.User) {
	if !Available(as) {
		http.Error(w, msgUnavailable, http.StatusServiceUnavailable)
		return
	}
	meta, _ := as["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	spec, _ := as["spec"].(map[string]any)
	a.certChanged()
	rt, err := a.transportFor(name, spec)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if u == nil {
		http.Error(w, msgMissingUser, http.StatusInternalServerError)
		return
	}
	ns, svc, port := serviceRef(spec)
	target, err := a.resolve(ns, svc, port)
	if err != nil {
		a.cfg.Log.Warn("aggregator: resolving a service", "namespace", ns, "name", svc, "err", err)
		http.Error(w, msgUnavailable, http.StatusServiceUnavailable)
		return
	}
	if isDiscovery(r.URL.Path) {
		ctx, cancel := context.WithTimeout(r.Context(), a.discoveryTimeout)
		defer cancel()
		r = r.WithContext(ctx)
	}
	// The audit ID the filters gave the request (the client's or a new
	// one), read before the backend's headers join the response's.
	auditID := w.Header().Get(headerAuditID)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			out := pr.Out
			out.URL.Scheme, out.URL.Host = target.Scheme, target.Host
			out.URL.Path, out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
			out.URL.RawQuery = pr.In.URL.RawQuery
			out.Host = target.Host
			stripCredentials(out.Header)
			setUserHeaders(out.Header, u, a.cfg.SendUID)
			// Both audit logs name the request alike.
			if auditID != "" {
				out.Header.Set(headerAuditID, auditID)
			}
			// The client's address follows any the request came with:
			// Rewrite gets Out without them, SetXForwarded appends.
			if xff := pr.In.Header.Values("X-Forwarded-For"); len(xff) > 0 {
				out.Header["X-Forwarded-For"] = slices.Clone(xff)
			}
			pr.SetXForwarded()
		},
		Transport: rt,
		ModifyResponse: func(resp *http.Response) error {
			if !a.cfg.AllowRedirects {
				refuseRedirect(resp)
			}
			return nil
		},
		// Watches and streams reach the client as they come.
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			a.cfg.Log.Warn("aggregator: proxying", "apiservice", name, "err", err)
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		},
	}
	rp.ServeHTTP(w, r)
}

// isDiscovery reports whether a proxied request for path asks for a
// group-version's discovery document (/apis/<group>/<version>), which
// discoveryTimeout bounds.
func isDiscovery(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	return len(parts) == 3 && parts[0] == "apis"
}

// refuseRedirect replaces a backend's redirect (a 3xx with a Location)
// by a 502 with upstream's plain-text message and none of the backend's
// headers: a client following it would take its credentials to wherever
// the extension server points (upstream's
// --aggregator-reject-forwarding-redirect).
func refuseRedirect(resp *http.Response) {
	if resp.StatusCode < 300 || resp.StatusCode > 399 || resp.Header.Get("Location") == "" {
		return
	}
	resp.Body.Close()
	*resp = http.Response{
		StatusCode: http.StatusBadGateway, Status: http.StatusText(http.StatusBadGateway),
		Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
		Header:        http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
		Body:          io.NopCloser(strings.NewReader(msgRedirect)),
		ContentLength: int64(len(msgRedirect)),
		Request:       resp.Request,
	}
}

// stripCredentials removes what authenticated the request here: the
// extension server learns the user from the X-Remote-* headers only.
func stripCredentials(h http.Header) {
	h.Del("Authorization")
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "impersonate-") {
			delete(h, k)
		}
	}
}

// serviceRef is the service an APIService's spec names; the port
// defaults to 443.
func serviceRef(spec map[string]any) (ns, name string, port int64) {
	ref, _ := spec["service"].(map[string]any)
	ns, _ = ref["namespace"].(string)
	name, _ = ref["name"].(string)
	port = 443
	if p, ok := ref["port"].(int64); ok {
		port = p
	}
	return ns, name, port
}

// Available reports whether the Available condition of an APIService is
// True.
func Available(as registry.Object) bool {
	status, _ := as["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["type"] == "Available" {
			return cm["status"] == "True"
		}
	}
	return false
}
