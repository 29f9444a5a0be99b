package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"sigs.k8s.io/yaml"

	"platd/server/validation"
)

// Audit levels, from least to most recorded.
const (
	AuditLevelNone            = "None"
	AuditLevelMetadata        = "Metadata"
	AuditLevelRequest         = "Request"
	AuditLevelRequestResponse = "RequestResponse"
)

// Audit stages, in the order a request passes them.
const (
	AuditStageRequestReceived  = "RequestReceived"
	AuditStageResponseStarted  = "ResponseStarted"
	AuditStageResponseComplete = "ResponseComplete"
	AuditStagePanic            = "Panic"
)

// AuditLevels and AuditStages are the valid values, in upstream's order
// (which its error texts list).
var (
	AuditLevels = []string{AuditLevelNone, AuditLevelMetadata, AuditLevelRequest, AuditLevelRequestResponse}
	AuditStages = []string{AuditStageRequestReceived, AuditStageResponseStarted, AuditStageResponseComplete, AuditStagePanic}
)

// AuditPolicyKind is the kind of an --audit-policy-file.
const AuditPolicyKind = "Policy"

// AuditPolicyAPIVersion is the one apiVersion a policy file may declare.
func AuditPolicyAPIVersion(b Brand) string { return b.Group("audit") + "/v1" }

// AuditPolicy is an --audit-policy-file: which requests are recorded and
// at what level. The first rule that matches a request decides; none
// matching means level None.
type AuditPolicy struct {
	APIVersion        string      `json:"apiVersion"`
	Kind              string      `json:"kind"`
	Metadata          any         `json:"metadata,omitempty"`
	Rules             []AuditRule `json:"rules"`
	OmitStages        []string    `json:"omitStages,omitempty"`
	OmitManagedFields bool        `json:"omitManagedFields,omitempty"`
}

// AuditRule is one rule of a policy. Empty lists match everything.
type AuditRule struct {
	Level      string   `json:"level"`
	Users      []string `json:"users,omitempty"`
	UserGroups []string `json:"userGroups,omitempty"`
	Verbs      []string `json:"verbs,omitempty"`
	// Resources and Namespaces match resource requests only; a namespace
	// of "" matches cluster-scoped resources.
	Resources  []AuditGroupResources `json:"resources,omitempty"`
	Namespaces []string              `json:"namespaces,omitempty"`
	// NonResourceURLs match non-resource requests: "*", an exact path, or
	// a prefix ending in "*".
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
	// OmitStages adds to the policy's.
	OmitStages []string `json:"omitStages,omitempty"`
	// OmitManagedFields, when set, overrides the policy's.
	OmitManagedFields *bool `json:"omitManagedFields,omitempty"`
}

// AuditGroupResources selects resources of one API group ("" the core
// group): "pods", "pods/log", "*", "*/status", "pods/*".
type AuditGroupResources struct {
	Group         string   `json:"group,omitempty"`
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}

// ErrAuditPolicy marks a policy file that cannot be used.
var ErrAuditPolicy = errors.New("invalid audit policy")

// LoadAuditPolicy reads and checks an --audit-policy-file. warnings are
// what was accepted but doubtful (unknown fields, as upstream decodes
// leniently after a failed strict decode).
func LoadAuditPolicy(path string, b Brand) (p *AuditPolicy, warnings []string, err error) {
	if path == "" {
		return nil, nil, errors.New("file path not specified")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to read file path %q: %+v", path, err)
	}
	p, warnings, err = ParseAuditPolicy(data, b)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v: from file %v", ErrAuditPolicy, err, path)
	}
	return p, warnings, nil
}

// ParseAuditPolicy decodes a policy in YAML or JSON and validates it with
// upstream's texts.
func ParseAuditPolicy(data []byte, b Brand) (*AuditPolicy, []string, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, nil, fmt.Errorf("failed decoding: %v", err)
	}
	var generic any
	if err := json.Unmarshal(js, &generic); err != nil {
		return nil, nil, fmt.Errorf("failed decoding: %v", err)
	}
	top, _ := generic.(map[string]any)
	apiVersion, _ := top["apiVersion"].(string)
	kind, _ := top["kind"].(string)
	switch {
	case kind == "":
		return nil, nil, fmt.Errorf("failed decoding: Object 'Kind' is missing in '%s'", strings.TrimSpace(string(js)))
	case apiVersion == "":
		return nil, nil, fmt.Errorf("failed decoding: Object 'apiVersion' is missing in '%s'", strings.TrimSpace(string(js)))
	case apiVersion != AuditPolicyAPIVersion(b) || kind != AuditPolicyKind:
		return nil, nil, fmt.Errorf("failed decoding: no kind %q is registered for version %q", kind, apiVersion)
	}
	var warnings []string
	t := reflect.TypeOf(AuditPolicy{})
	if unknown := unknownFields(generic, t, ""); len(unknown) > 0 {
		quoted := make([]string, len(unknown))
		for i, u := range unknown {
			quoted[i] = fmt.Sprintf("unknown field %q", u)
		}
		warnings = append(warnings, "Audit policy contains errors, falling back to lenient decoding: strict decoding error: "+strings.Join(quoted, ", "))
	}
	if bad := typeMismatches(generic, t, ""); len(bad) > 0 {
		return nil, nil, fmt.Errorf("failed decoding: %s", strings.Join(bad, ", "))
	}
	var p AuditPolicy
	if err := json.Unmarshal(js, &p); err != nil {
		return nil, nil, fmt.Errorf("failed decoding: %v", err)
	}
	if errs := p.Validate(); len(errs) > 0 {
		return nil, nil, errs
	}
	if len(p.Rules) == 0 {
		return nil, nil, errors.New("loaded illegal policy with 0 rules")
	}
	return &p, warnings, nil
}

// Validate returns upstream's field errors of the policy.
func (p *AuditPolicy) Validate() FieldErrors {
	errs := validateAuditStages(p.OmitStages, "omitStages")
	for i, r := range p.Rules {
		errs = append(errs, r.validate(fmt.Sprintf("rules[%d]", i))...)
	}
	return errs
}

func (r *AuditRule) validate(path string) FieldErrors {
	var errs FieldErrors
	switch {
	case r.Level == "":
		errs = append(errs, required(path+".level", ""))
	case !contains(AuditLevels, r.Level):
		errs = append(errs, notSupported(path+".level", r.Level, AuditLevels))
	}
	for i, u := range r.NonResourceURLs {
		if u == "*" {
			continue
		}
		p := fmt.Sprintf("%s.nonResourceURLs[%d]", path, i)
		if !strings.HasPrefix(u, "/") {
			errs = append(errs, invalid(p, u, "non-resource URL rules must begin with a '/' character"))
		}
		if u != "" && strings.Contains(u[:len(u)-1], "*") {
			errs = append(errs, invalid(p, u, "non-resource URL wildcards '*' must be the final character of the rule"))
		}
	}
	// Upstream names these fields without the resource's index.
	for _, gr := range r.Resources {
		if gr.Group != "" {
			if msgs := validation.IsDNS1123Subdomain(gr.Group); len(msgs) > 0 {
				errs = append(errs, invalid(path+".resources.group", gr.Group, strings.Join(msgs, ",")))
			}
		}
		if len(gr.ResourceNames) > 0 && len(gr.Resources) == 0 {
			errs = append(errs, invalid(path+".resources.resourceNames", goStrings(gr.ResourceNames), "using resourceNames requires at least one resource"))
		}
	}
	if len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.Namespaces) > 0) {
		errs = append(errs, invalid(path+".nonResourceURLs", goStrings(r.NonResourceURLs), "rules cannot apply to both regular resources and non-resource URLs"))
	}
	return append(errs, validateAuditStages(r.OmitStages, path+".omitStages")...)
}

func validateAuditStages(stages []string, path string) FieldErrors {
	var errs FieldErrors
	for i, s := range stages {
		if !contains(AuditStages, s) {
			errs = append(errs, invalid(fmt.Sprintf("%s[%d]", path, i), s, "allowed stages are "+strings.Join(AuditStages, ",")))
		}
	}
	return errs
}

// goStrings prints a string list as Go's %#v does, the way upstream's
// field errors show a list value.
type goStrings []string

func (g goStrings) String() string { return fmt.Sprintf("%#v", []string(g)) }

// Audit log formats; platd writes json only.
const (
	AuditFormatJSON   = "json"
	AuditFormatLegacy = "legacy"
)

// AuditLog is the --audit-* flags: a policy and a log file (or "-" for
// standard output). Audit is on only when both are given, as upstream.
type AuditLog struct {
	PolicyFile string
	Path       string
	// MaxAge is in days, MaxBackup a count, MaxSize in megabytes; 0 means
	// no limit (MaxSize: the 100 MB default).
	MaxAge, MaxBackup, MaxSize int
	Format                     string
}

// Enabled reports whether requests are audited.
func (a AuditLog) Enabled() bool { return a.PolicyFile != "" && a.Path != "" }

// validate checks the flags with upstream's texts.
func (a AuditLog) validate() []string {
	var errs []string
	if a.MaxAge < 0 {
		errs = append(errs, fmt.Sprintf("--audit-log-maxage %v can't be a negative number", a.MaxAge))
	}
	if a.MaxBackup < 0 {
		errs = append(errs, fmt.Sprintf("--audit-log-maxbackup %v can't be a negative number", a.MaxBackup))
	}
	if a.MaxSize < 0 {
		errs = append(errs, fmt.Sprintf("--audit-log-maxsize %v can't be a negative number", a.MaxSize))
	}
	switch a.Format {
	case "", AuditFormatJSON:
	case AuditFormatLegacy:
		errs = append(errs, "--audit-log-format=legacy is not supported by platd: use --audit-log-format=json")
	default:
		errs = append(errs, fmt.Sprintf("invalid audit log format %s, allowed formats are %q", a.Format, strings.Join([]string{AuditFormatJSON, AuditFormatLegacy}, ",")))
	}
	return errs
}
