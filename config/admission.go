package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"platd/server/validation"
)

// Kinds of the --admission-control-config-file and of the plugin
// configurations it holds.
const (
	AdmissionConfigurationKind   = "AdmissionConfiguration"
	PodSecurityConfigurationKind = "PodSecurityConfiguration"
	// EventRateLimitConfigurationKind is the kind of the EventRateLimit
	// plugin's configuration, upstream's plain "Configuration".
	EventRateLimitConfigurationKind = "Configuration"
)

// ErrAdmissionConfig is wrapped by every error of loading an
// --admission-control-config-file.
var ErrAdmissionConfig = errors.New("invalid admission control configuration")

// AdmissionPlugins is the configuration of each admission plugin platd
// configures, read from the --admission-control-config-file. The zero
// value is every plugin's default configuration.
type AdmissionPlugins struct {
	// PodSecurity configures the Pod Security admission.
	PodSecurity PodSecurityConfiguration
	// EventRateLimit configures the EventRateLimit admission: set, and
	// validated, when the plugin runs (it has no default configuration);
	// nil when it does not.
	EventRateLimit *EventRateLimitConfiguration
	// ImagePolicyWebhook configures the ImagePolicyWebhook admission:
	// set, and validated, when the plugin runs (it has no default
	// configuration); nil when it does not.
	ImagePolicyWebhook *ImagePolicyWebhookConfiguration
	// PodNodeSelector holds the PodNodeSelector plugin's default node
	// selector and namespace whitelists.
	PodNodeSelector PodNodeSelectorConfiguration
	// PodTolerationRestriction holds the PodTolerationRestriction
	// plugin's default tolerations and whitelist.
	PodTolerationRestriction PodTolerationRestrictionConfiguration
}

// PodSecurityConfiguration is the PodSecurity plugin's configuration:
// the policy of namespaces that set none, and the requests that are
// never evaluated.
type PodSecurityConfiguration struct {
	Defaults   PodSecurityDefaults   `json:"defaults"`
	Exemptions PodSecurityExemptions `json:"exemptions"`
}

// PodSecurityDefaults is the level and version of each mode for a
// namespace without the mode's labels. Loaded, every field is set:
// levels default to "privileged", versions to "latest".
type PodSecurityDefaults struct {
	Enforce        string `json:"enforce,omitempty"`
	EnforceVersion string `json:"enforce-version,omitempty"`
	Audit          string `json:"audit,omitempty"`
	AuditVersion   string `json:"audit-version,omitempty"`
	Warn           string `json:"warn,omitempty"`
	WarnVersion    string `json:"warn-version,omitempty"`
}

// PodSecurityExemptions names the requesting users, the namespaces and
// the runtime classes whose pods are admitted without evaluation.
type PodSecurityExemptions struct {
	Usernames      []string `json:"usernames,omitempty"`
	Namespaces     []string `json:"namespaces,omitempty"`
	RuntimeClasses []string `json:"runtimeClasses,omitempty"`
}

// AdmissionConfigAPIVersions lists the apiVersions an
// AdmissionConfiguration may declare.
func AdmissionConfigAPIVersions(b Brand) []string {
	g := b.Group("apiserver.config")
	return []string{g + "/v1", g + "/v1alpha1"}
}

// PodSecurityConfigAPIVersions lists the apiVersions a
// PodSecurityConfiguration may declare.
func PodSecurityConfigAPIVersions(b Brand) []string {
	g := b.Group("pod-security.admission.config")
	return []string{g + "/v1", g + "/v1beta1", g + "/v1alpha1"}
}

// admissionPluginDecoder reads one plugin's configuration into into.
// data is nil when the file names no configuration for the plugin (or
// does not name the plugin): the decoder sets the plugin's defaults.
type admissionPluginDecoder func(data []byte, b Brand, into *AdmissionPlugins) error

// admissionPluginDecoders maps the name of each admission plugin platd
// configures to the decoder of its configuration. Entries of other
// plugins, and of configured plugins that do not run, are accepted and
// ignored, as upstream asks a file only for the configuration of the
// plugins it runs.
var admissionPluginDecoders = map[string]admissionPluginDecoder{
	PluginImagePolicyWebhook:       decodeImagePolicyWebhookPlugin,
	PluginPodSecurity:              decodePodSecurityPlugin,
	PluginEventRateLimit:           decodeEventRateLimitPlugin,
	PluginPodNodeSelector:          decodePodNodeSelectorPlugin,
	PluginPodTolerationRestriction: decodePodTolerationRestrictionPlugin,
}

// legacyConfigPlugins are the plugins that, as upstream, read a file
// holding no AdmissionConfiguration but their own unversioned
// configuration.
var legacyConfigPlugins = []string{PluginImagePolicyWebhook, PluginPodNodeSelector}

// admissionConfigurationFile is the file as written. Upstream decodes it
// leniently: unknown fields are ignored.
type admissionConfigurationFile struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Plugins    []admissionPluginFile `json:"plugins"`
}

// admissionPluginFile is one plugin's entry: its configuration inline,
// or the path of a file holding it (relative to the file's directory).
// An inline configuration wins over a path.
type admissionPluginFile struct {
	Name          string          `json:"name"`
	Path          string          `json:"path"`
	Configuration json.RawMessage `json:"configuration"`
}

// LoadAdmissionConfig reads path and returns the configuration of every
// plugin platd configures that runs (off says which do not); a path of
// "" is every plugin's default.
func LoadAdmissionConfig(path string, b Brand, off AdmissionPluginsOff) (AdmissionPlugins, error) {
	if path == "" {
		p, err := DecodeAdmissionConfig(nil, "", b, off)
		if err != nil {
			return AdmissionPlugins{}, fmt.Errorf("%w: %w", ErrAdmissionConfig, err)
		}
		return p, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return AdmissionPlugins{}, fmt.Errorf("%w: unable to read admission control configuration from %q [%w]", ErrAdmissionConfig, path, err)
	}
	p, err := DecodeAdmissionConfig(data, filepath.Dir(path), b, off)
	if err != nil {
		return AdmissionPlugins{}, fmt.Errorf("%w: %s: %w", ErrAdmissionConfig, path, err)
	}
	return p, nil
}

// DecodeAdmissionConfig decodes an AdmissionConfiguration (YAML or JSON;
// nil is none) whose relative plugin paths are relative to dir, and
// decodes and validates the configuration of each plugin platd
// configures that runs (off says which do not), in upstream's plugin
// order and with upstream's messages. The entry of a plugin that does not
// run is not read: its path may be missing, its configuration bad.
func DecodeAdmissionConfig(data []byte, dir string, b Brand, off AdmissionPluginsOff) (AdmissionPlugins, error) {
	var out AdmissionPlugins
	found := map[string][]byte{}
	if data != nil {
		f, legacy, err := decodeAdmissionFile(data, b)
		if err != nil {
			return out, err
		}
		if legacy {
			for _, name := range legacyConfigPlugins {
				if admissionPluginDecoders[name] != nil {
					found[name] = data
				}
			}
		}
		for _, p := range f.Plugins {
			// The first entry of a name is the one upstream reads.
			if _, seen := found[p.Name]; seen || admissionPluginDecoders[p.Name] == nil || !off.Enabled(p.Name) {
				continue
			}
			cfg, err := pluginConfigData(p, dir)
			if err != nil {
				return out, err
			}
			found[p.Name] = cfg
		}
	}
	for _, name := range AdmissionPluginNames {
		decode := admissionPluginDecoders[name]
		if decode == nil || !off.Enabled(name) {
			continue
		}
		if err := decode(found[name], b, &out); err != nil {
			return out, fmt.Errorf("couldn't init admission plugin %q: %w", name, err)
		}
	}
	return out, nil
}

// decodeAdmissionFile decodes the AdmissionConfiguration leniently after
// checking its apiVersion and kind. A file of other ones, holding one of
// the two legacy unversioned plugin configurations, is no
// AdmissionConfiguration but is accepted, as upstream does: legacy is
// true, and the plugins of legacyConfigPlugins read the file itself.
func decodeAdmissionFile(data []byte, b Brand) (f admissionConfigurationFile, legacy bool, err error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return f, false, err
	}
	var top map[string]any
	if err := json.Unmarshal(js, &top); err != nil {
		return f, false, fmt.Errorf("expected an object with apiVersion and kind: %w", err)
	}
	apiVersion, _ := top["apiVersion"].(string)
	kind, _ := top["kind"].(string)
	if kind != AdmissionConfigurationKind || !contains(AdmissionConfigAPIVersions(b), apiVersion) {
		_, image := top["imagePolicy"]
		_, nodeSelector := top["podNodeSelectorPluginConfig"]
		if image || nodeSelector {
			return f, true, nil
		}
		return f, false, fmt.Errorf("no kind %q is registered for version %q: want kind %s in %s",
			kind, apiVersion, AdmissionConfigurationKind, strings.Join(AdmissionConfigAPIVersions(b), " or "))
	}
	if err := json.Unmarshal(js, &f); err != nil {
		return f, false, err
	}
	return f, false, nil
}

// pluginConfigData returns the configuration an entry names: inline, or
// read from its path; nil when it names none.
func pluginConfigData(p admissionPluginFile, dir string) ([]byte, error) {
	if len(p.Configuration) > 0 && !bytes.Equal(p.Configuration, []byte("null")) {
		return p.Configuration, nil
	}
	if p.Path == "" {
		return nil, nil
	}
	path := p.Path
	if !filepath.IsAbs(path) {
		if dir == "" {
			dir = "."
		}
		path = filepath.Join(dir, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("couldn't open admission plugin configuration %s: %w", path, err)
	}
	return data, nil
}

// podSecurityConfigurationFile is a PodSecurityConfiguration as written;
// upstream decodes it strictly.
type podSecurityConfigurationFile struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Defaults   PodSecurityDefaults   `json:"defaults"`
	Exemptions PodSecurityExemptions `json:"exemptions"`
}

// decodePodSecurityPlugin reads the PodSecurity configuration: none is
// the defaults, privileged:latest in every mode and no exemptions.
func decodePodSecurityPlugin(data []byte, b Brand, into *AdmissionPlugins) error {
	var f podSecurityConfigurationFile
	if len(bytes.TrimSpace(data)) > 0 {
		if err := decodeStrict(data, &f, PodSecurityConfigurationKind, PodSecurityConfigAPIVersions(b)); err != nil {
			return err
		}
	}
	c := PodSecurityConfiguration{Defaults: f.Defaults, Exemptions: f.Exemptions}
	d := &c.Defaults
	for _, level := range []*string{&d.Enforce, &d.Audit, &d.Warn} {
		if *level == "" {
			*level = PodSecurityPrivileged
		}
	}
	for _, version := range []*string{&d.EnforceVersion, &d.AuditVersion, &d.WarnVersion} {
		if *version == "" {
			*version = PodSecurityLatest
		}
	}
	if err := podSecurityDefaultsErrors(*d); err != nil {
		return fmt.Errorf("%s configuration error: %w", PluginPodSecurity, err)
	}
	if errs := validatePodSecurityExemptions(c.Exemptions); len(errs) > 0 {
		return fmt.Errorf("%s invalid: %w", PluginPodSecurity, errs)
	}
	into.PodSecurity = c
	return nil
}

// Pod Security levels and the version that is always the newest.
const (
	PodSecurityPrivileged = "privileged"
	PodSecurityBaseline   = "baseline"
	PodSecurityRestricted = "restricted"
	PodSecurityLatest     = "latest"
)

// podSecurityVersionPattern is a policy version other than "latest".
var podSecurityVersionPattern = regexp.MustCompile(`^v1\.(0|[1-9][0-9]*)$`)

// PodSecurityLevelError is upstream's message for a value that is no
// level, or "" for a level.
func PodSecurityLevelError(level string) string {
	switch level {
	case PodSecurityPrivileged, PodSecurityBaseline, PodSecurityRestricted:
		return ""
	}
	return "must be one of " + strings.Join([]string{PodSecurityPrivileged, PodSecurityBaseline, PodSecurityRestricted}, ", ")
}

// PodSecurityVersionError is upstream's message for a value that is no
// policy version, or "" for a version.
func PodSecurityVersionError(version string) string {
	if version == PodSecurityLatest || podSecurityVersionPattern.MatchString(version) {
		return ""
	}
	return `must be "latest" or "v1.x"`
}

// aggregateError is a list of errors printed as upstream's aggregate:
// one alone, several in brackets.
type aggregateError []string

func (a aggregateError) Error() string {
	if len(a) == 1 {
		return a[0]
	}
	return "[" + strings.Join(a, ", ") + "]"
}

// podSecurityDefaultsErrors checks each default level and version, as
// upstream does when it turns them into the default policy, named as it
// names them.
func podSecurityDefaultsErrors(d PodSecurityDefaults) error {
	var errs aggregateError
	for _, m := range []struct{ name, level, version string }{
		{"Enforce", d.Enforce, d.EnforceVersion},
		{"Audit", d.Audit, d.AuditVersion},
		{"Warn", d.Warn, d.WarnVersion},
	} {
		if msg := PodSecurityLevelError(m.level); msg != "" {
			errs = append(errs, m.name+".Level: "+msg)
		}
		if msg := PodSecurityVersionError(m.version); msg != "" {
			errs = append(errs, m.name+".Version: "+msg)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// validatePodSecurityExemptions checks the exemptions with upstream's
// rules: namespaces are DNS labels, runtime classes DNS subdomains,
// usernames not empty, and none named twice.
func validatePodSecurityExemptions(e PodSecurityExemptions) FieldErrors {
	var errs FieldErrors
	check := func(field string, values []string, problem func(path, v string) *FieldError) {
		seen := map[string]bool{}
		for i, v := range values {
			p := fmt.Sprintf("exemptions.%s[%d]", field, i)
			switch {
			case problem(p, v) != nil:
				errs = append(errs, problem(p, v))
			case seen[v]:
				errs = append(errs, duplicate(p, v))
			default:
				seen[v] = true
			}
		}
	}
	name := func(rule func(string) []string) func(p, v string) *FieldError {
		return func(p, v string) *FieldError {
			if ps := rule(v); len(ps) > 0 {
				return invalid(p, v, strings.Join(ps, ", "))
			}
			return nil
		}
	}
	check("namespaces", e.Namespaces, name(validation.IsDNS1123Label))
	check("runtimeClasses", e.RuntimeClasses, name(validation.IsDNS1123Subdomain))
	check("usernames", e.Usernames, func(p, v string) *FieldError {
		if v == "" {
			return required(p, "")
		}
		return nil
	})
	return errs
}
