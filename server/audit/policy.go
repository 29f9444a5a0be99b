// Package audit decides which requests are recorded (the policy), builds
// their audit.<domain>/v1 Event lines stage by stage, and writes them to a
// size-rotated log without holding requests up beyond a bounded buffer.
package audit

import (
	"slices"
	"strings"

	"platd/config"
	"platd/security"
)

// Level is an audit level; a higher one records more.
type Level int

// Levels in upstream's order.
const (
	LevelNone Level = iota
	LevelMetadata
	LevelRequest
	LevelRequestResponse
)

var levelNames = [...]string{config.AuditLevelNone, config.AuditLevelMetadata, config.AuditLevelRequest, config.AuditLevelRequestResponse}

func (l Level) String() string { return levelNames[l] }

func parseLevel(s string) Level {
	for i, n := range levelNames {
		if n == s {
			return Level(i)
		}
	}
	return LevelNone
}

// RequestConfig is what the policy decided for one request.
type RequestConfig struct {
	Level Level
	// OmitStages are the stages not written.
	OmitStages []string
	// OmitManagedFields drops metadata.managedFields from the request and
	// response objects recorded.
	OmitManagedFields bool
}

// omits reports whether stage is not written.
func (c *RequestConfig) omits(stage string) bool { return slices.Contains(c.OmitStages, stage) }

// Policy evaluates a validated config.AuditPolicy. It is immutable and
// safe for concurrent use.
type Policy struct {
	rules []rule
}

type rule struct {
	config.AuditRule
	cfg RequestConfig
}

// NewPolicy prepares p (validated by config.ParseAuditPolicy): each rule's
// omitted stages join the policy's, and its omitManagedFields, when set,
// wins over the policy's.
func NewPolicy(p *config.AuditPolicy) *Policy {
	out := &Policy{rules: make([]rule, len(p.Rules))}
	for i, r := range p.Rules {
		cfg := RequestConfig{Level: parseLevel(r.Level), OmitManagedFields: p.OmitManagedFields}
		for _, s := range append(slices.Clone(p.OmitStages), r.OmitStages...) {
			if !slices.Contains(cfg.OmitStages, s) {
				cfg.OmitStages = append(cfg.OmitStages, s)
			}
		}
		if r.OmitManagedFields != nil {
			cfg.OmitManagedFields = *r.OmitManagedFields
		}
		out.rules[i] = rule{AuditRule: r, cfg: cfg}
	}
	return out
}

// Evaluate returns the configuration of the first rule matching the
// request a (whose User is nil when unauthenticated); level None when
// none matches.
func (p *Policy) Evaluate(a *security.Attributes) RequestConfig {
	for i := range p.rules {
		if p.rules[i].matches(a) {
			return p.rules[i].cfg
		}
	}
	return RequestConfig{Level: LevelNone}
}

func (r *rule) matches(a *security.Attributes) bool {
	user := a.User
	if len(r.Users) > 0 && (user == nil || !slices.Contains(r.Users, user.Name)) {
		return false
	}
	if len(r.UserGroups) > 0 {
		if user == nil || !slices.ContainsFunc(user.Groups, func(g string) bool { return slices.Contains(r.UserGroups, g) }) {
			return false
		}
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, a.Verb) {
		return false
	}
	if len(r.Namespaces) > 0 || len(r.Resources) > 0 {
		return r.matchesResource(a)
	}
	if len(r.NonResourceURLs) > 0 {
		return !a.ResourceRequest && slices.ContainsFunc(r.NonResourceURLs, func(spec string) bool { return pathMatches(a.Path, spec) })
	}
	return true
}

// pathMatches is a non-resource URL rule: "*", the exact path, or a
// prefix ending in "*".
func pathMatches(path, spec string) bool {
	if spec == "*" || spec == path {
		return true
	}
	prefix, wild := strings.CutSuffix(spec, "*")
	return wild && strings.HasPrefix(path, prefix)
}

func (r *rule) matchesResource(a *security.Attributes) bool {
	if !a.ResourceRequest {
		return false
	}
	// Cluster-scoped requests have the namespace "".
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, a.Namespace) {
		return false
	}
	if len(r.Resources) == 0 {
		return true
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined += "/" + a.Subresource
	}
	for _, gr := range r.Resources {
		if gr.Group != a.APIGroup {
			continue
		}
		if len(gr.Resources) == 0 {
			return true
		}
		if len(gr.ResourceNames) > 0 && !slices.Contains(gr.ResourceNames, a.Name) {
			continue
		}
		for _, res := range gr.Resources {
			switch {
			case res == "*" || res == combined:
				return true
			case a.Subresource != "" && strings.HasPrefix(res, "*/") && res[2:] == a.Subresource:
				return true
			case strings.HasSuffix(res, "/*") && res[:len(res)-2] == a.Resource:
				return true
			}
		}
	}
	return false
}
