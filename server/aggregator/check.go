package aggregator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"platd/security"
	"platd/server/discovery"
	"platd/server/registry"
)

// checkTimeout bounds one discovery check, upstream's value: a server
// that takes longer is not available.
const checkTimeout = 5 * time.Second

// maxDiscoveryBody bounds the resource list a check reads.
const maxDiscoveryBody = 4 << 20

// checkUser is who discovery checks are made as, upstream's identity: a
// member of the privileged group, so that the server's authorization
// never refuses the check.
var checkUser = &security.User{Name: aggregatorUser, Groups: []string{security.SystemPrivilegedGroup}}

// discoveryUser is who discovery documents are read as, upstream's
// identity for it: the aggregator's name, without groups.
var discoveryUser = &security.User{Name: aggregatorUser}

// aggregatorUser is upstream's name of the aggregator's own requests.
const aggregatorUser = "system:kube-aggregator"

// checkAttempts is how many discovery requests one check makes at once,
// upstream's number: each goes to an endpoint resolved on its own, and
// one success is enough, so that one endpoint that is down among several
// does not fail the check.
const checkAttempts = 5

// CheckDiscovery runs upstream's last availability check of the
// APIService called name with spec: checkAttempts concurrent GETs of its
// group-version's discovery document, each from an endpoint of its
// service resolved on its own, of which one must answer 2xx within
// checkTimeout. The check, as upstream's, does not verify the server.
// The error's text is the condition message upstream writes, that of the
// last attempt to fail. On success the resources the server lists are
// read from an endpoint that answered, verifying it as a proxied request
// does, and kept for discovery (RemoteGroupVersions).
func (a *Aggregator) CheckDiscovery(ctx context.Context, name string, spec map[string]any) error {
	a.certChanged()
	group, _ := spec["group"].(string)
	version, _ := spec["version"].(string)
	type result struct {
		u   *url.URL
		err error
	}
	tries, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	results := make(chan result, checkAttempts)
	for range checkAttempts {
		go func() {
			u, err := a.checkOnce(tries, name, spec)
			results <- result{u, err}
		}()
	}
	var passed *url.URL
	var err error
	for range checkAttempts {
		r := <-results
		if r.err == nil {
			passed = r.u
			break
		}
		err = r.err
	}
	cancel()
	if passed == nil {
		return err
	}
	ctx, cancelRead := context.WithTimeout(ctx, checkTimeout)
	defer cancelRead()
	a.keepList(name, group, version, a.readResources(ctx, name, spec, passed, group, version))
	return nil
}

// checkOnce is one attempt of CheckDiscovery: it resolves an endpoint
// and GETs the discovery document there, returning its URL.
func (a *Aggregator) checkOnce(ctx context.Context, name string, spec map[string]any) (*url.URL, error) {
	ns, svc, port := serviceRef(spec)
	u, err := a.resolve(ns, svc, port)
	if err != nil {
		return nil, err
	}
	group, _ := spec["group"].(string)
	version, _ := spec["version"].(string)
	u.Path = "/apis/" + group + "/" + version
	if name == "v1." {
		u.Path = "/api/" + version
	}
	if _, err := a.get(ctx, a.check, u.String(), "application/json", checkUser); err != nil {
		return nil, fmt.Errorf("failing or missing response from %s: %w", u, err)
	}
	return u, nil
}

// readResources returns the resources of group/version the extension
// server at u (its discovery document's URL) lists, as upstream's
// aggregator reads them: through the APIService's own transport, which
// verifies the server against its caBundle, from its aggregated discovery
// document when it serves one, else from its resource list (legacy). Nil
// when neither is readable.
func (a *Aggregator) readResources(ctx context.Context, name string, spec map[string]any, u *url.URL, group, version string) *discovery.RemoteResources {
	rt, err := a.transportFor(name, spec)
	if err != nil {
		a.cfg.Log.Warn("aggregator: reading discovery", "apiservice", name, "err", err)
		return nil
	}
	apis := *u
	apis.Path = "/apis"
	if body, err := a.get(ctx, rt, apis.String(), discovery.AggregatedAccept(a.cfg.DiscoveryGroups...), discoveryUser); err == nil {
		if res, err := discovery.ParseAggregatedGroupVersion(body, group, version); err == nil {
			return res
		}
	}
	legacy, err := a.get(ctx, rt, u.String(), "application/json", discoveryUser)
	if err == nil {
		var res *discovery.RemoteResources
		if res, err = discovery.ParseResourceList(legacy); err == nil {
			return res
		}
	}
	a.cfg.Log.Warn("aggregator: unreadable discovery document", "url", u.String(), "err", err)
	return nil
}

// get reads url through rt, as u, accepting accept, without following
// redirects, wanting 2xx. Its errors are those of an HTTP client, as
// upstream's messages quote them.
func (a *Aggregator) get(ctx context.Context, rt http.RoundTripper, url, accept string, u *security.User) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	setUserHeaders(req.Header, u, false)
	client := &http.Client{Transport: rt, Timeout: checkTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDiscoveryBody))
		return nil, fmt.Errorf("bad status from %s: %d", url, resp.StatusCode)
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxDiscoveryBody))
}

// Forget drops what is kept of the APIService called name: its transport
// and its resource list. Call it when it is deleted or names no service.
func (a *Aggregator) Forget(name string) { a.forget(name) }

// Lookup returns the APIService of group/version when it names a
// service.
func (a *Aggregator) Lookup(group, version string) (registry.Object, bool) {
	if a.cfg.APIServices == nil {
		return nil, false
	}
	as, err := a.cfg.Objects.Get(a.cfg.APIServices, "", version+"."+group)
	if err != nil {
		return nil, false
	}
	spec, _ := as["spec"].(map[string]any)
	_, remote := spec["service"].(map[string]any)
	return as, remote
}
