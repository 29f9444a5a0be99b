package config

import (
	"fmt"
	"iter"
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

// Feature gates platd gives behaviour to. Every other gate of
// kube-apiserver v1.32 (featureTable) is accepted with upstream's checks
// and warnings and changes nothing here: platd has no code it would switch.
const (
	AllowUnsafeMalformedObjectDeletion    = "AllowUnsafeMalformedObjectDeletion"
	AnonymousAuthConfigurableEndpoints    = "AnonymousAuthConfigurableEndpoints"
	APIResponseCompression                = "APIResponseCompression"
	AuthorizeWithSelectors                = "AuthorizeWithSelectors"
	CBORServingAndStorage                 = "CBORServingAndStorage"
	RecoverVolumeExpansionFailure         = "RecoverVolumeExpansionFailure"
	RemoteRequestHeaderUID                = "RemoteRequestHeaderUID"
	StructuredAuthenticationConfiguration = "StructuredAuthenticationConfiguration"
	WatchList                             = "WatchList"
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

// featureEntry is one row of featureTable.
type featureEntry struct {
	Name    string
	Stage   Stage
	Default bool
	Locked  bool
}

func (e *featureEntry) spec() FeatureSpec {
	return FeatureSpec{Stage: e.Stage, Default: e.Default, Locked: e.Locked}
}

// LookupFeature returns the v1.32 spec of the named gate; ok is false for
// a name kube-apiserver v1.32 does not register (the meta gates included).
func LookupFeature(name string) (spec FeatureSpec, ok bool) {
	lo, hi := 0, len(featureTable)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if featureTable[m].Name < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(featureTable) || featureTable[lo].Name != name {
		return FeatureSpec{}, false
	}
	return featureTable[lo].spec(), true
}

// KnownFeatures yields every gate --feature-gates accepts besides the meta
// gates, sorted by name, with its v1.32 spec.
func KnownFeatures() iter.Seq2[string, FeatureSpec] {
	return func(yield func(string, FeatureSpec) bool) {
		for i := range featureTable {
			if !yield(featureTable[i].Name, featureTable[i].spec()) {
				return
			}
		}
	}
}

// FeatureGates is the parsed --feature-gates: the gates the command line
// set, over their v1.32 defaults. The zero value has every default. It
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
	spec, _ := LookupFeature(name)
	return spec.Default
}

// String lists the gates that differ from their defaults, sorted, as
// --feature-gates would spell them.
func (g FeatureGates) String() string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(g.set)) {
		if spec, _ := LookupFeature(name); g.set[name] != spec.Default {
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
		spec, ok := LookupFeature(k)
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
		for name, spec := range KnownFeatures() {
			if _, named := asked[name]; !named && spec.Stage == stage && !spec.Locked {
				set[name] = v
			}
		}
	}
	return FeatureGates{set: set}, warnings, nil
}

// FeatureGatesUsage is --feature-gates' help: the settable gates, sorted,
// with stage and default, as upstream lists them (GA and deprecated gates
// are left out there too). The table's order is the lines' order, so it
// is one pass with no formatting or sorting: it is built at every start.
func FeatureGatesUsage() string {
	var b strings.Builder
	b.Grow(8 << 10)
	b.WriteString("A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:")
	line := func(name string, stage Stage, def bool) {
		b.WriteByte('\n')
		b.WriteString(name)
		b.WriteString("=true|false (")
		b.WriteString(string(stage))
		b.WriteString(" - default=")
		b.WriteString(strconv.FormatBool(def))
		b.WriteByte(')')
	}
	meta := []struct {
		name  string
		stage Stage
	}{{AllAlpha, Alpha}, {AllBeta, Beta}}
	for i := range featureTable {
		e := &featureTable[i]
		for len(meta) > 0 && meta[0].name < e.Name {
			line(meta[0].name, meta[0].stage, false)
			meta = meta[1:]
		}
		if e.Stage != GA && e.Stage != Deprecated {
			line(e.Name, e.Stage, e.Default)
		}
	}
	for _, m := range meta {
		line(m.name, m.stage, false)
	}
	return b.String()
}
