// Package request derives what a request asks for from its URL: the facts
// authorization and the REST handlers act on.
package request

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"platd/server/selector"
)

// Info is what a request addresses. For non-resource requests only Path and
// Verb are set.
type Info struct {
	IsResource bool
	// Path is the URL path.
	Path string
	// Verb is the API verb (get, list, watch, create, update, patch, delete,
	// deletecollection) or, for non-resource requests, the lower-case method.
	Verb string
	// Prefix is "api" or "apis".
	Prefix      string
	Group       string
	Version     string
	Namespace   string
	Resource    string
	Subresource string
	Name        string
	// Parts are the path segments after the group-version (and namespace).
	Parts []string
	// NameFromSelector is set when a list or watch names one object through
	// fieldSelector=metadata.name=<n>.
	NameFromSelector bool
	// VerbFromPath is set for the deprecated /watch/ and /proxy/ path
	// forms.
	VerbFromPath bool
	// FieldSelector and LabelSelector are the raw selectors of a list,
	// watch or deletecollection not addressed by the verb-via-path form,
	// kept for authorizers that allow a narrower read (upstream's
	// AuthorizeWithSelectors). Selectors on other verbs are not recorded.
	FieldSelector, LabelSelector string
	// Err is set when the URL cannot be understood at all: the request is
	// then answered 500, as upstream answers it.
	Err error
}

// verbsViaPath are the verbs a path may name right after the version.
var verbsViaPath = map[string]bool{"proxy": true, "watch": true}

var methodVerbs = map[string]string{
	http.MethodPost:   "create",
	http.MethodGet:    "get",
	http.MethodHead:   "get",
	http.MethodPut:    "update",
	http.MethodPatch:  "patch",
	http.MethodDelete: "delete",
}

// Parse derives Info from a request's method and URL.
func Parse(method string, u *url.URL) *Info {
	info := &Info{Path: u.Path, Verb: strings.ToLower(method)}
	segs := splitPath(u.Path)
	if len(segs) < 3 || (segs[0] != "api" && segs[0] != "apis") {
		return info
	}
	info.Prefix = segs[0]
	segs = segs[1:]
	if info.Prefix == "apis" {
		if len(segs) < 3 || segs[0] == "" {
			return info
		}
		info.Group = segs[0]
		segs = segs[1:]
	}
	if segs[0] == "" {
		// An empty version segment ("/api//x") addresses nothing.
		return info
	}
	info.IsResource = true
	info.Version = segs[0]
	segs = segs[1:]
	if verbsViaPath[segs[0]] {
		if len(segs) < 2 {
			info.Err = fmt.Errorf("unable to determine kind and namespace from url, %s", u)
			return info
		}
		info.Verb = segs[0]
		info.VerbFromPath = true
		segs = segs[1:]
	} else {
		info.Verb = methodVerbs[method]
	}
	if segs[0] == "namespaces" {
		if len(segs) > 1 {
			info.Namespace = segs[1]
			if len(segs) > 2 && segs[2] != "status" && segs[2] != "finalize" {
				segs = segs[2:]
			}
		}
	}
	info.Parts = segs
	if len(segs) > 0 {
		info.Resource = segs[0]
	}
	if len(segs) > 1 {
		info.Name = segs[1]
	}
	if len(segs) > 2 && info.Verb != "proxy" {
		info.Subresource = segs[2]
	}
	q := u.Query()
	if info.Name == "" {
		switch info.Verb {
		case "get":
			// A read of a collection: a list, or a watch when asked, which
			// still names one object when its field selector pins
			// metadata.name. A selector that does not parse names nothing.
			info.Verb = "list"
			if watchRequested(q) {
				info.Verb = "watch"
			}
			if fs, err := selector.ParseFields(q.Get("fieldSelector")); err == nil && listOptionsDecode(q) {
				if n, ok := fs.RequiresExactMatch("metadata.name"); ok && validSegment(n) {
					info.Name = n
					info.NameFromSelector = true
				}
			}
		case "delete":
			info.Verb = "deletecollection"
		}
	}
	switch info.Verb {
	case "list", "watch", "deletecollection":
		if !info.VerbFromPath {
			info.FieldSelector, info.LabelSelector = q.Get("fieldSelector"), q.Get("labelSelector")
		}
	}
	return info
}

// IsList reports whether the request addresses a collection.
func (i *Info) IsList() bool {
	return i.Verb == "list" || i.Verb == "watch" || i.Verb == "deletecollection" || (i.Verb == "create" && i.Name == "")
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// listOptionsDecode reports whether the query's other list options decode
// as upstream decodes them (a label selector that parses, integer limit and
// timeoutSeconds): upstream takes no name from the field selector of a
// query it cannot decode.
func listOptionsDecode(q url.Values) bool {
	if _, err := selector.ParseLabels(q.Get("labelSelector")); err != nil {
		return false
	}
	for _, k := range []string{"limit", "timeoutSeconds"} {
		if v, ok := q[k]; ok && len(v) > 0 {
			if _, err := strconv.ParseInt(v[0], 10, 64); err != nil {
				return false
			}
		}
	}
	return true
}

// watchRequested reads the watch parameter as upstream's query decoding
// does: present and neither "0" nor any case of "false" is true.
func watchRequested(q url.Values) bool {
	v, ok := q["watch"]
	if !ok || len(v) == 0 {
		return false
	}
	return v[0] != "0" && !strings.EqualFold(v[0], "false")
}

func validSegment(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/%")
}

type ctxKey struct{}

// WithInfo returns ctx carrying info.
func WithInfo(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, ctxKey{}, info)
}

// InfoFrom returns the Info stored by WithInfo, or nil.
func InfoFrom(ctx context.Context) *Info {
	i, _ := ctx.Value(ctxKey{}).(*Info)
	return i
}

// longRunningSubresources hold a connection open for as long as the client
// wants (streams and tunnels): no in-flight slot or request timeout
// applies to them, as upstream.
var longRunningSubresources = map[string]bool{"attach": true, "exec": true, "proxy": true, "log": true, "portforward": true}

// LongRunning reports whether the request may legitimately last without
// bound: a watch, a proxy, or a streaming subresource.
func (i *Info) LongRunning() bool {
	if i.Verb == "watch" || i.Verb == "proxy" {
		return true
	}
	return i.IsResource && longRunningSubresources[i.Subresource]
}
