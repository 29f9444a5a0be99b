package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Stage is a feature gate's maturity, as --feature-gates help prints it.
type Stage string

// The stages of upstream's lifecycle. GA gates are usually locked on;
// deprecated gates warn when set and go away in a later release.
const (
	Alpha      Stage = "ALPHA"
	Beta       Stage = "BETA"
	GA         Stage = ""
	Deprecated Stage = "DEPRECATED"
)

// Feature gates platd knows: those of kube-apiserver v1.32 that change
// platd's behaviour or that its users commonly set. A gate platd has no
// behaviour for is still accepted, so that a command line written for the
// upstream server starts.
const (
	AllowUnsafeMalformedObjectDeletion       = "AllowUnsafeMalformedObjectDeletion"
	AnonymousAuthConfigurableEndpoints       = "AnonymousAuthConfigurableEndpoints"
	APIResponseCompression                   = "APIResponseCompression"
	APIServerIdentity                        = "APIServerIdentity"
	APIServerTracing                         = "APIServerTracing"
	AuthorizeWithSelectors                   = "AuthorizeWithSelectors"
	BtreeWatchCache                          = "BtreeWatchCache"
	CBORServingAndStorage                    = "CBORServingAndStorage"
	ConsistentListFromCache                  = "ConsistentListFromCache"
	KMSv1                                    = "KMSv1"
	MutatingAdmissionPolicy                  = "MutatingAdmissionPolicy"
	OpenAPIEnums                             = "OpenAPIEnums"
	RemoteRequestHeaderUID                   = "RemoteRequestHeaderUID"
	RetryGenerateName                        = "RetryGenerateName"
	ServiceAccountTokenJTI                   = "ServiceAccountTokenJTI"
	ServiceAccountTokenNodeBinding           = "ServiceAccountTokenNodeBinding"
	ServiceAccountTokenNodeBindingValidation = "ServiceAccountTokenNodeBindingValidation"
	StorageVersionAPI                        = "StorageVersionAPI"
	StorageVersionHash                       = "StorageVersionHash"
	StrictCostEnforcementForVAP              = "StrictCostEnforcementForVAP"
	StrictCostEnforcementForWebhooks         = "StrictCostEnforcementForWebhooks"
	StructuredAuthenticationConfiguration    = "StructuredAuthenticationConfiguration"
	StructuredAuthorizationConfiguration     = "StructuredAuthorizationConfiguration"
	UnauthenticatedHTTP2DOSMitigation        = "UnauthenticatedHTTP2DOSMitigation"
	WatchList                                = "WatchList"
)

// The two meta gates switch every unlocked alpha or beta gate that the same
// command line does not name.
const (
	AllAlpha = "AllAlpha"
	AllBeta  = "AllBeta"
)

// FeatureSpec is one gate's v1.32 stage and default. A locked gate may be
// set only to its default.
type FeatureSpec struct {
	Stage   Stage
	Default bool
	Locked  bool
}

// KnownFeatures are the gates --feature-gates accepts, with v1.32's specs.
var KnownFeatures = map[string]FeatureSpec{
	AllowUnsafeMalformedObjectDeletion:       {Stage: Alpha},
	AnonymousAuthConfigurableEndpoints:       {Stage: Beta, Default: true},
	APIResponseCompression:                   {Stage: Beta, Default: true},
	APIServerIdentity:                        {Stage: Beta, Default: true},
	APIServerTracing:                         {Stage: Beta, Default: true},
	AuthorizeWithSelectors:                   {Stage: Beta, Default: true},
	BtreeWatchCache:                          {Stage: Beta, Default: true},
	CBORServingAndStorage:                    {Stage: Alpha},
	ConsistentListFromCache:                  {Stage: Beta, Default: true},
	KMSv1:                                    {Stage: Deprecated},
	MutatingAdmissionPolicy:                  {Stage: Alpha},
	OpenAPIEnums:                             {Stage: Beta, Default: true},
	RemoteRequestHeaderUID:                   {Stage: Alpha},
	RetryGenerateName:                        {Stage: GA, Default: true, Locked: true},
	ServiceAccountTokenJTI:                   {Stage: GA, Default: true, Locked: true},
	ServiceAccountTokenNodeBinding:           {Stage: Beta, Default: true},
	ServiceAccountTokenNodeBindingValidation: {Stage: GA, Default: true, Locked: true},
	StorageVersionAPI:                        {Stage: Alpha},
	StorageVersionHash:                       {Stage: Beta, Default: true},
	StrictCostEnforcementForVAP:              {Stage: GA, Default: true, Locked: true},
	StrictCostEnforcementForWebhooks:         {Stage: GA, Default: true, Locked: true},
	StructuredAuthenticationConfiguration:    {Stage: Beta, Default: true},
	StructuredAuthorizationConfiguration:     {Stage: GA, Default: true, Locked: true},
	UnauthenticatedHTTP2DOSMitigation:        {Stage: Beta, Default: true},
	WatchList:                                {Stage: Beta, Default: true},
}

// FeatureGates is the parsed --feature-gates: the gates the command line
// set, over KnownFeatures' defaults. The zero value has every default. It
// is read-only after parsing and safe for concurrent use.
type FeatureGates struct {
	set map[string]bool
}

// Enabled says whether the named gate is on. A name that is not a known
// gate is off: the callers name gates by the constants above.
func (g FeatureGates) Enabled(name string) bool {
	if v, ok := g.set[name]; ok {
		return v
	}
	return KnownFeatures[name].Default
}

// String lists the gates that differ from their defaults, sorted, as
// --feature-gates would spell them.
func (g FeatureGates) String() string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(g.set)) {
		if g.set[name] != KnownFeatures[name].Default {
			out = append(out, name+"="+strconv.FormatBool(g.set[name]))
		}
	}
	return strings.Join(out, ",")
}

// ParseFeatureGates parses --feature-gates values, each a comma-separated
// list of Name=true|false as the repeated flag delivers them; a later entry
// for a gate wins. It returns upstream's warnings for setting GA and
// deprecated gates. Errors carry upstream's texts, prefixed by the flag and
// wrapped in ErrInvalid.
func ParseFeatureGates(values []string) (FeatureGates, []string, error) {
	g, warnings, err := parseFeatureGates(values)
	if err != nil {
		return FeatureGates{}, nil, fmt.Errorf("%w: --feature-gates: %w", ErrInvalid, err)
	}
	return g, warnings, nil
}

func parseFeatureGates(values []string) (FeatureGates, []string, error) {
	// Entries are collected first so that a gate named explicitly wins
	// over AllAlpha/AllBeta wherever it stands.
	var order []string
	asked := map[string]bool{}
	for _, value := range values {
		for _, entry := range strings.Split(value, ",") {
			if entry == "" {
				continue
			}
			k, v, ok := strings.Cut(entry, "=")
			k = strings.TrimSpace(k)
			if !ok {
				return FeatureGates{}, nil, fmt.Errorf("missing bool value for %s", k)
			}
			v = strings.TrimSpace(v)
			b, err := strconv.ParseBool(v)
			if err != nil {
				return FeatureGates{}, nil, fmt.Errorf("invalid value of %s=%s, err: %v", k, v, err)
			}
			if _, seen := asked[k]; !seen {
				order = append(order, k)
			}
			asked[k] = b
		}
	}
	set := map[string]bool{}
	var warnings []string
	for _, k := range order {
		v := asked[k]
		if k == AllAlpha || k == AllBeta {
			continue
		}
		spec, ok := KnownFeatures[k]
		if !ok {
			return FeatureGates{}, nil, fmt.Errorf("unrecognized feature gate: %s", k)
		}
		if spec.Locked && v != spec.Default {
			return FeatureGates{}, nil, fmt.Errorf("cannot set feature gate %s to %t, feature is locked to %t", k, v, spec.Default)
		}
		set[k] = v
		switch spec.Stage {
		case Deprecated:
			warnings = append(warnings, fmt.Sprintf("Setting deprecated feature gate %s=%t. It will be removed in a future release.", k, v))
		case GA:
			warnings = append(warnings, fmt.Sprintf("Setting GA feature gate %s=%t. It will be removed in a future release.", k, v))
		}
	}
	for meta, stage := range map[string]Stage{AllAlpha: Alpha, AllBeta: Beta} {
		v, ok := asked[meta]
		if !ok {
			continue
		}
		for name, spec := range KnownFeatures {
			if _, named := asked[name]; !named && spec.Stage == stage && !spec.Locked {
				set[name] = v
			}
		}
	}
	return FeatureGates{set: set}, warnings, nil
}

// FeatureGatesUsage is --feature-gates' help: the settable gates, sorted,
// with stage and default, as upstream lists them (GA and deprecated gates
// are left out there too).
func FeatureGatesUsage() string {
	lines := []string{
		AllAlpha + "=true|false (ALPHA - default=false)",
		AllBeta + "=true|false (BETA - default=false)",
	}
	for name, spec := range KnownFeatures {
		if spec.Stage == GA || spec.Stage == Deprecated {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s=true|false (%s - default=%t)", name, spec.Stage, spec.Default))
	}
	slices.Sort(lines)
	return "A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:\n" + strings.Join(lines, "\n")
}
