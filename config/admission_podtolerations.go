package config

import (
	"fmt"
	"strconv"
	"strings"

	"platd/server/validation"
)

// PodTolerationRestrictionConfigurationKind is the kind of the
// PodTolerationRestriction plugin's configuration.
const PodTolerationRestrictionConfigurationKind = "Configuration"

// PodTolerationRestrictionConfigAPIVersions lists the apiVersions the
// PodTolerationRestriction plugin's configuration may declare.
func PodTolerationRestrictionConfigAPIVersions(b Brand) []string {
	return []string{b.Group("podtolerationrestriction.admission") + "/v1alpha1"}
}

// PodTolerationRestrictionConfiguration is the PodTolerationRestriction
// plugin's configuration: the tolerations a new pod gets, and those a
// pod may have, in a namespace that does not set its own. nil is none.
type PodTolerationRestrictionConfiguration struct {
	Default   []Toleration `json:"default,omitempty"`
	Whitelist []Toleration `json:"whitelist,omitempty"`
}

// Toleration is a pod's toleration of node taints, as a pod spec and the
// namespace annotations of the PodTolerationRestriction plugin write it.
type Toleration struct {
	Key               string `json:"key,omitempty"`
	Operator          string `json:"operator,omitempty"`
	Value             string `json:"value,omitempty"`
	Effect            string `json:"effect,omitempty"`
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// podTolerationRestrictionFile is the configuration as written.
type podTolerationRestrictionFile struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Default    []Toleration `json:"default"`
	Whitelist  []Toleration `json:"whitelist"`
}

// decodePodTolerationRestrictionPlugin reads the PodTolerationRestriction
// configuration: none is no default and no whitelist. Given, it is
// decoded as upstream decodes it (unknown members ignored) and its
// tolerations validated as a pod's are.
func decodePodTolerationRestrictionPlugin(data []byte, b Brand, into *AdmissionPlugins) error {
	into.PodTolerationRestriction = PodTolerationRestrictionConfiguration{}
	if data == nil {
		return nil
	}
	var f podTolerationRestrictionFile
	if err := decodeLenient(data, &f, PodTolerationRestrictionConfigurationKind, PodTolerationRestrictionConfigAPIVersions(b)); err != nil {
		return err
	}
	errs := validateTolerations(f.Default, "podtolerationrestriction.default")
	errs = append(errs, validateTolerations(f.Whitelist, "podtolerationrestriction.whitelist")...)
	if len(errs) > 0 {
		// Upstream prints its error list as a Go slice: bracketed,
		// separated by spaces, one error as well as several.
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("invalid config: [%s]", strings.Join(msgs, " "))
	}
	into.PodTolerationRestriction = PodTolerationRestrictionConfiguration{Default: f.Default, Whitelist: f.Whitelist}
	return nil
}

// validateTolerations checks tolerations as upstream checks a pod's, with
// its messages, under path.
func validateTolerations(list []Toleration, path string) FieldErrors {
	var errs FieldErrors
	for i, t := range list {
		p := path + "[" + strconv.Itoa(i) + "]"
		problems := validation.TolerationProblems(validation.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect, HasSeconds: t.TolerationSeconds != nil})
		for _, pr := range problems {
			field := p + "." + pr.Member
			switch {
			case pr.Supported != nil:
				errs = append(errs, notSupported(field, pr.Value, pr.Supported))
			case pr.Whole:
				errs = append(errs, invalid(field, t.goSyntax(), pr.Message))
			default:
				errs = append(errs, invalid(field, pr.Value, pr.Message))
			}
		}
	}
	return errs
}

// goSyntax is t as upstream prints its own toleration type in an error.
func (t Toleration) goSyntax() goSyntax {
	secs := "(*int64)(nil)"
	if t.TolerationSeconds != nil {
		secs = "&" + strconv.FormatInt(*t.TolerationSeconds, 10)
	}
	return goSyntax(fmt.Sprintf("core.Toleration{Key:%q, Operator:%q, Value:%q, Effect:%q, TolerationSeconds:%s}",
		t.Key, t.Operator, t.Value, t.Effect, secs))
}
