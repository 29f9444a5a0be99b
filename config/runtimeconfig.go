package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Keys of --runtime-config that switch every group-version of a stability
// level at once. They are applied in this order, whatever the order on the
// command line, and before any key naming a group-version or a resource.
const (
	RuntimeConfigAll   = "api/all"
	RuntimeConfigGA    = "api/ga"
	RuntimeConfigBeta  = "api/beta"
	RuntimeConfigAlpha = "api/alpha"
)

// runtimeConfigLegacy is accepted and ignored, whatever its value: it once
// switched legacy versions that no longer exist.
const runtimeConfigLegacy = "api/legacy"

// coreKey is the one spelling the core group's "v1", "api/v1" and every key
// below them fold into; "/v1/<resource>" is how a core resource is named.
const coreKey = "/v1"

// levels lists the level keys in the order they are applied.
var levels = [...]string{RuntimeConfigAll, RuntimeConfigGA, RuntimeConfigBeta, RuntimeConfigAlpha}

// acceptedKeys and acceptedValues end the syntax errors, so that the operator
// sees what to write instead.
const (
	acceptedKeys   = "keys are <group>/<version> or <group>/<version>/<resource> (v1, api/v1 or /v1 for the core group, /v1/<resource> for a core resource), api/all, api/ga, api/beta or api/alpha"
	acceptedValues = "values are true or false; an empty value means true"
	acceptedLevel  = "api/all, api/ga, api/beta and api/alpha take exactly true or false"
)

// RuntimeConfig is the parsed --runtime-config: which API levels,
// group-versions and resources the operator switched on or off. The zero
// value switches nothing. It holds only what was written; Resolve checks it
// against the APIs a server knows.
type RuntimeConfig struct {
	// levels holds api/all, api/ga, api/beta, api/alpha in that order.
	levels [len(levels)]levelSetting
	// versions and resources are in order of first appearance; a key given
	// twice keeps its position and takes its later value.
	versions  []versionSetting
	resources []resourceSetting
}

// GroupVersionResource names one resource of one group-version. Group is ""
// for the core group; Resource is the lowercase plural, without subresource.
type GroupVersionResource struct {
	Group, Version, Resource string
}

// groupVersion is the key of a group-version.
type groupVersion struct{ group, version string }

// String spells gv as API paths and messages do: the core group's versions
// stand alone.
func (gv groupVersion) String() string {
	if gv.group == "" {
		return gv.version
	}
	return gv.group + "/" + gv.version
}

func (r GroupVersionResource) groupVersion() groupVersion { return groupVersion{r.Group, r.Version} }

type levelSetting struct{ set, enabled bool }

type versionSetting struct {
	entry   string // as written, for messages
	gv      groupVersion
	enabled bool
}

type resourceSetting struct {
	entry   string
	gvr     GroupVersionResource
	enabled bool
}

// ParseRuntimeConfig parses --runtime-config values: each is a comma-separated
// list of key[=value] entries, as the repeated flag delivers them. A later
// entry for the same key replaces an earlier one. Every syntax error is
// reported, wrapped in ErrInvalid; names of groups, versions and resources
// are checked later by Resolve.
func ParseRuntimeConfig(values []string) (RuntimeConfig, error) {
	rc, problems := parseRuntimeConfig(values)
	if len(problems) > 0 {
		return RuntimeConfig{}, fmt.Errorf("%w: --runtime-config: %s", ErrInvalid, strings.Join(problems, "; "))
	}
	return rc, nil
}

// parseRuntimeConfig returns the parsed configuration and one message per
// bad entry; the configuration is meaningful only without messages.
func parseRuntimeConfig(values []string) (RuntimeConfig, []string) {
	p := runtimeConfigParser{versionAt: map[groupVersion]int{}, resourceAt: map[GroupVersionResource]int{}}
	var problems []string
	for _, value := range values {
		for _, entry := range strings.Split(value, ",") {
			if entry = strings.TrimSpace(entry); entry == "" {
				continue
			}
			if problem := p.add(entry); problem != "" {
				problems = append(problems, problem)
			}
		}
	}
	rc := p.rc
	if len(problems) == 0 && rc.keys() == 1 && rc.levels[0].set && !rc.levels[0].enabled {
		problems = append(problems, "invalid key with only "+RuntimeConfigAll+"=false (it would serve nothing: also name the group-versions to keep)")
	}
	return rc, problems
}

// runtimeConfigParser builds a RuntimeConfig one entry at a time, keeping
// each key once.
type runtimeConfigParser struct {
	rc         RuntimeConfig
	versionAt  map[groupVersion]int
	resourceAt map[GroupVersionResource]int
}

// add records one key[=value] entry and returns what is wrong with it, or "".
func (p *runtimeConfigParser) add(entry string) string {
	written, val, _ := strings.Cut(entry, "=")
	written, val = strings.TrimSpace(written), strings.TrimSpace(val)
	if written == runtimeConfigLegacy {
		return ""
	}
	key := foldCore(written)
	if i := levelIndex(key); i >= 0 {
		if val != "true" && val != "false" {
			return fmt.Sprintf("invalid value %v=%v (entry %q: %s)", key, val, entry, acceptedLevel)
		}
		p.rc.levels[i] = levelSetting{set: true, enabled: val == "true"}
		return ""
	}
	parts := strings.Split(key, "/")
	if len(parts) != 2 && len(parts) != 3 {
		return fmt.Sprintf("runtime-config invalid key %s (entry %q: %s)", key, entry, acceptedKeys)
	}
	enabled, err := parseEnabled(val)
	if err != nil {
		return fmt.Sprintf("invalid value of %s: %s, err: %v (entry %q: %s)", key, val, err, entry, acceptedValues)
	}
	if len(parts) == 2 {
		gv := groupVersion{parts[0], parts[1]}
		s := versionSetting{entry: entry, gv: gv, enabled: enabled}
		if i, ok := p.versionAt[gv]; ok {
			p.rc.versions[i] = s
		} else {
			p.versionAt[gv] = len(p.rc.versions)
			p.rc.versions = append(p.rc.versions, s)
		}
		return ""
	}
	if r := parts[2]; strings.ToLower(r) != r {
		return fmt.Sprintf("invalid key %v: group/version/resource and resource is always lowercase plural, not %q (entry %q)", key, r, entry)
	}
	gvr := GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}
	s := resourceSetting{entry: entry, gvr: gvr, enabled: enabled}
	if i, ok := p.resourceAt[gvr]; ok {
		p.rc.resources[i] = s
	} else {
		p.resourceAt[gvr] = len(p.rc.resources)
		p.rc.resources = append(p.rc.resources, s)
	}
	return ""
}

// keys counts the distinct keys set.
func (rc RuntimeConfig) keys() int {
	n := len(rc.versions) + len(rc.resources)
	for _, l := range rc.levels {
		if l.set {
			n++
		}
	}
	return n
}

// foldCore maps the spellings of the core group to coreKey. Every key that
// starts with "v1/" or "api/v1/" folds into the whole core group-version,
// dropping what follows, as the upstream server does; only "/v1/<resource>"
// names a single core resource.
func foldCore(key string) string {
	if key == "v1" || key == "api/v1" || strings.HasPrefix(key, "v1/") || strings.HasPrefix(key, "api/v1/") {
		return coreKey
	}
	return key
}

// levelIndex returns the position of key in levels, or -1.
func levelIndex(key string) int {
	for i, l := range levels {
		if key == l {
			return i
		}
	}
	return -1
}

// parseEnabled reads the value of a group-version or resource key: empty is
// true, otherwise the forms strconv.ParseBool accepts.
func parseEnabled(val string) (bool, error) {
	if val == "" {
		return true, nil
	}
	return strconv.ParseBool(val)
}

// String renders the configuration as one flag value that parses back to
// it: levels first, then group-versions, then resources.
func (rc RuntimeConfig) String() string {
	var entries []string
	for i, l := range rc.levels {
		if l.set {
			entries = append(entries, levels[i]+"="+strconv.FormatBool(l.enabled))
		}
	}
	for _, v := range rc.versions {
		entries = append(entries, v.gv.group+"/"+v.gv.version+"="+strconv.FormatBool(v.enabled))
	}
	for _, r := range rc.resources {
		entries = append(entries, r.gvr.Group+"/"+r.gvr.Version+"/"+r.gvr.Resource+"="+strconv.FormatBool(r.enabled))
	}
	return strings.Join(entries, ",")
}
