// Package flowcontrol classifies requests as upstream's API priority and
// fairness does: by the stored FlowSchemas, in matching precedence, to the
// PriorityLevelConfiguration each names. The classification is what
// upstream reports in every response's X-Kubernetes-PF-* headers and what
// decides whether a request is exempt from the concurrency limits.
package flowcontrol

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"platd/security"
)

// Wildcards of flow schema rules.
const (
	all             = "*"
	levelTypeExempt = "Exempt"
)

// FlowSchema is the part of a stored FlowSchema classification reads.
type FlowSchema struct {
	Metadata struct {
		Name string `json:"name"`
		UID  string `json:"uid"`
	} `json:"metadata"`
	Spec struct {
		PriorityLevelConfiguration struct {
			Name string `json:"name"`
		} `json:"priorityLevelConfiguration"`
		MatchingPrecedence int32  `json:"matchingPrecedence"`
		Rules              []Rule `json:"rules"`
	} `json:"spec"`
}

// Rule is one entry of a flow schema's rules: who, and what.
type Rule struct {
	Subjects []struct {
		Kind string `json:"kind"`
		User *struct {
			Name string `json:"name"`
		} `json:"user"`
		Group *struct {
			Name string `json:"name"`
		} `json:"group"`
		ServiceAccount *struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"serviceAccount"`
	} `json:"subjects"`
	ResourceRules []struct {
		Verbs        []string `json:"verbs"`
		APIGroups    []string `json:"apiGroups"`
		Resources    []string `json:"resources"`
		ClusterScope bool     `json:"clusterScope"`
		Namespaces   []string `json:"namespaces"`
	} `json:"resourceRules"`
	NonResourceRules []struct {
		Verbs           []string `json:"verbs"`
		NonResourceURLs []string `json:"nonResourceURLs"`
	} `json:"nonResourceRules"`
}

// PriorityLevel is the part of a stored PriorityLevelConfiguration
// classification reads.
type PriorityLevel struct {
	Metadata struct {
		Name string `json:"name"`
		UID  string `json:"uid"`
	} `json:"metadata"`
	Spec struct {
		Type string `json:"type"`
	} `json:"spec"`
}

// DecodeFlowSchema reads a stored FlowSchema.
func DecodeFlowSchema(data []byte) (*FlowSchema, error) {
	var fs FlowSchema
	if err := json.Unmarshal(data, &fs); err != nil {
		return nil, fmt.Errorf("decoding FlowSchema: %w", err)
	}
	return &fs, nil
}

// DecodePriorityLevel reads a stored PriorityLevelConfiguration.
func DecodePriorityLevel(data []byte) (*PriorityLevel, error) {
	var pl PriorityLevel
	if err := json.Unmarshal(data, &pl); err != nil {
		return nil, fmt.Errorf("decoding PriorityLevelConfiguration: %w", err)
	}
	return &pl, nil
}

// Match is where a request was classified.
type Match struct {
	FlowSchema, PriorityLevel       string // names
	FlowSchemaUID, PriorityLevelUID string
	// Exempt is set for a priority level of type Exempt: its requests are
	// never limited.
	Exempt bool
}

// Classifier holds the configuration requests are classified by. Its
// methods are safe for concurrent use: Replace swaps the configuration
// whole, so a request sees one configuration or the next.
type Classifier struct {
	cur atomic.Pointer[[]schemaMatch]
}

// schemaMatch is a flow schema whose priority level exists, with what a
// match of it reports.
type schemaMatch struct {
	fs    *FlowSchema
	match Match
}

// Replace makes schemas and levels the configuration. A flow schema
// naming a priority level that does not exist (dangling) matches nothing,
// as upstream.
func (c *Classifier) Replace(schemas []*FlowSchema, levels []*PriorityLevel) {
	byName := make(map[string]*PriorityLevel, len(levels))
	for _, pl := range levels {
		byName[pl.Metadata.Name] = pl
	}
	ordered := make([]schemaMatch, 0, len(schemas))
	for _, fs := range schemas {
		pl := byName[fs.Spec.PriorityLevelConfiguration.Name]
		if pl == nil {
			continue
		}
		ordered = append(ordered, schemaMatch{fs: fs, match: Match{
			FlowSchema: fs.Metadata.Name, FlowSchemaUID: fs.Metadata.UID,
			PriorityLevel: pl.Metadata.Name, PriorityLevelUID: pl.Metadata.UID,
			Exempt: pl.Spec.Type == levelTypeExempt,
		}})
	}
	slices.SortFunc(ordered, func(a, b schemaMatch) int {
		return cmp.Or(cmp.Compare(a.fs.Spec.MatchingPrecedence, b.fs.Spec.MatchingPrecedence),
			strings.Compare(a.fs.Metadata.Name, b.fs.Metadata.Name))
	})
	c.cur.Store(&ordered)
}

// Classify returns the first flow schema, in matching precedence and then
// name, with a rule matching a; false when none does (no configuration
// yet, or the catch-all schema is gone).
func (c *Classifier) Classify(a security.Attributes) (Match, bool) {
	cur := c.cur.Load()
	if cur == nil || a.User == nil {
		return Match{}, false
	}
	// Rules name a subresource as resource/subresource.
	resource := a.Resource
	if a.Subresource != "" {
		resource += "/" + a.Subresource
	}
	for _, s := range *cur {
		for i := range s.fs.Spec.Rules {
			if s.fs.Spec.Rules[i].matches(a, resource) {
				return s.match, true
			}
		}
	}
	return Match{}, false
}

// matches reports whether r matches a, whose resource and subresource
// are resource: one of its subjects is the user, and one of its resource
// rules (for a resource request) or non-resource rules (for any other)
// matches what is asked.
func (r *Rule) matches(a security.Attributes, resource string) bool {
	if !r.matchesSubject(a.User) {
		return false
	}
	if a.ResourceRequest {
		for _, rr := range r.ResourceRules {
			if !has(rr.Verbs, a.Verb) || !has(rr.APIGroups, a.APIGroup) || !has(rr.Resources, resource) {
				continue
			}
			if a.Namespace == "" {
				if rr.ClusterScope {
					return true
				}
			} else if has(rr.Namespaces, a.Namespace) {
				return true
			}
		}
		return false
	}
	for _, nr := range r.NonResourceRules {
		if has(nr.Verbs, a.Verb) && matchesURL(nr.NonResourceURLs, a.Path) {
			return true
		}
	}
	return false
}

func (r *Rule) matchesSubject(u *security.User) bool {
	for _, s := range r.Subjects {
		switch {
		case s.Kind == "User" && s.User != nil:
			if s.User.Name == all || s.User.Name == u.Name {
				return true
			}
		case s.Kind == "Group" && s.Group != nil:
			if s.Group.Name == all || slices.Contains(u.Groups, s.Group.Name) {
				return true
			}
		case s.Kind == "ServiceAccount" && s.ServiceAccount != nil:
			rest, ok := strings.CutPrefix(u.Name, security.ServiceAccountUsernamePrefix)
			if !ok {
				continue
			}
			ns, name, ok := strings.Cut(rest, ":")
			if ok && ns == s.ServiceAccount.Namespace && (s.ServiceAccount.Name == all || name == s.ServiceAccount.Name) {
				return true
			}
		}
	}
	return false
}

// has reports whether list holds v, or is the wildcard alone (validation
// keeps the wildcard alone in its list).
func has(list []string, v string) bool {
	if len(list) == 1 && list[0] == all {
		return true
	}
	return slices.Contains(list, v)
}

// matchesURL reports whether path is one of urls, or under one of them:
// a listed URL, less a trailing "*", names the paths below it as a
// directory ("/healthz" the checks under "/healthz/", "/apis/*" every
// path under "/apis/"); "*" alone is every path.
func matchesURL(urls []string, path string) bool {
	for _, u := range urls {
		if u == all || u == path {
			return true
		}
		prefix := strings.TrimSuffix(u, "*")
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}
