// Package validation holds the name and metadata rules shared by every
// resource type, with the exact texts clients see.
package validation

import (
	"fmt"
	"regexp"
	"strings"
)

const (
	dns1123LabelFmt     = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1035LabelFmt     = "[a-z]([-a-z0-9]*[a-z0-9])?"
	dns1123SubdomainFmt = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	qualifiedNameFmt    = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	labelValueFmt       = "(" + qualifiedNameFmt + ")?"

	// DNS1123LabelMaxLength is the longest label (namespace names).
	DNS1123LabelMaxLength = 63
	// DNS1123SubdomainMaxLength is the longest subdomain (most names).
	DNS1123SubdomainMaxLength = 253
	// QualifiedNameMaxLength is the longest name part of a label key.
	QualifiedNameMaxLength = 63
	// LabelValueMaxLength is the longest label value.
	LabelValueMaxLength = 63
)

var (
	dns1123LabelRe     = regexp.MustCompile("^" + dns1123LabelFmt + "$")
	dns1035LabelRe     = regexp.MustCompile("^" + dns1035LabelFmt + "$")
	dns1123SubdomainRe = regexp.MustCompile("^" + dns1123SubdomainFmt + "$")
	qualifiedNameRe    = regexp.MustCompile("^" + qualifiedNameFmt + "$")
	labelValueRe       = regexp.MustCompile("^" + labelValueFmt + "$")
)

func maxLenError(n int) string { return fmt.Sprintf("must be no more than %d characters", n) }

func regexError(msg, format string, examples ...string) string {
	if len(examples) == 0 {
		return msg + " (regex used for validation is '" + format + "')"
	}
	msg += " (e.g. "
	for i, e := range examples {
		if i > 0 {
			msg += " or "
		}
		msg += "'" + e + "', "
	}
	return msg + "regex used for validation is '" + format + "')"
}

// IsDNS1123Label returns the problems of a DNS-1123 label; none means valid.
func IsDNS1123Label(v string) []string {
	var errs []string
	if len(v) > DNS1123LabelMaxLength {
		errs = append(errs, maxLenError(DNS1123LabelMaxLength))
	}
	if !dns1123LabelRe.MatchString(v) {
		if dns1123SubdomainRe.MatchString(v) {
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", dns1123LabelFmt, "my-name", "123-abc"))
		}
	}
	return errs
}

// IsDNS1035Label returns the problems of a DNS-1035 label: a DNS-1123
// label that starts with a letter.
func IsDNS1035Label(v string) []string {
	var errs []string
	if len(v) > DNS1123LabelMaxLength {
		errs = append(errs, maxLenError(DNS1123LabelMaxLength))
	}
	if !dns1035LabelRe.MatchString(v) {
		errs = append(errs, regexError("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", dns1035LabelFmt, "my-name", "abc-123"))
	}
	return errs
}

// IsDNS1123Subdomain returns the problems of a DNS-1123 subdomain.
func IsDNS1123Subdomain(v string) []string {
	var errs []string
	if len(v) > DNS1123SubdomainMaxLength {
		errs = append(errs, maxLenError(DNS1123SubdomainMaxLength))
	}
	if !dns1123SubdomainRe.MatchString(v) {
		errs = append(errs, regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

// IsPathSegment returns the problems of a name used as a URL path segment.
func IsPathSegment(v string) []string {
	var errs []string
	switch v {
	case ".":
		return []string{"may not be '.'"}
	case "..":
		return []string{"may not be '..'"}
	}
	if strings.Contains(v, "/") {
		errs = append(errs, "may not contain '/'")
	}
	if strings.Contains(v, "%") {
		errs = append(errs, "may not contain '%'")
	}
	return errs
}

// IsQualifiedName returns the problems of a label, annotation or finalizer
// key: an optional DNS subdomain prefix and a name.
func IsQualifiedName(v string) []string {
	var errs []string
	parts := strings.Split(v, "/")
	var name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		var prefix string
		prefix, name = parts[0], parts[1]
		if prefix == "" {
			errs = append(errs, "prefix part "+"must be non-empty")
		} else {
			for _, e := range IsDNS1123Subdomain(prefix) {
				errs = append(errs, "prefix part "+e)
			}
		}
	default:
		return append(errs, "a qualified name "+regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", qualifiedNameFmt, "MyName", "my.name", "123-abc")+" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
	}
	if name == "" {
		errs = append(errs, "name part "+"must be non-empty")
	} else if len(name) > QualifiedNameMaxLength {
		errs = append(errs, "name part "+maxLenError(QualifiedNameMaxLength))
	}
	if !qualifiedNameRe.MatchString(name) {
		errs = append(errs, "name part "+regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// IsValidLabelValue returns the problems of a label value.
func IsValidLabelValue(v string) []string {
	var errs []string
	if len(v) > LabelValueMaxLength {
		errs = append(errs, maxLenError(LabelValueMaxLength))
	}
	if !labelValueRe.MatchString(v) {
		errs = append(errs, regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}
