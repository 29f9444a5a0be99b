// Package validation holds the name and metadata rules shared by every
// resource type, with the exact texts clients see.
package validation

import (
	"fmt"
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

// The formats above are checked by hand rather than by regexp: names are
// checked on every write, many times per Pod, and a hand check allocates
// nothing. names_test.go holds them to the regexps.

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isLowerAlnum(c) || c >= 'A' && c <= 'Z' }

// matchDNS1123Label reports whether v matches dns1123LabelFmt.
func matchDNS1123Label(v string) bool {
	if v == "" || !isLowerAlnum(v[0]) || !isLowerAlnum(v[len(v)-1]) {
		return false
	}
	for i := 1; i < len(v)-1; i++ {
		if !isLowerAlnum(v[i]) && v[i] != '-' {
			return false
		}
	}
	return true
}

// matchDNS1035Label reports whether v matches dns1035LabelFmt.
func matchDNS1035Label(v string) bool {
	return v != "" && v[0] >= 'a' && v[0] <= 'z' && matchDNS1123Label(v)
}

// matchDNS1123Subdomain reports whether v matches dns1123SubdomainFmt.
func matchDNS1123Subdomain(v string) bool {
	for {
		label, rest, more := strings.Cut(v, ".")
		if !matchDNS1123Label(label) {
			return false
		}
		if !more {
			return true
		}
		v = rest
	}
}

// matchQualifiedName reports whether v matches qualifiedNameFmt.
func matchQualifiedName(v string) bool {
	if v == "" || !isAlnum(v[0]) || !isAlnum(v[len(v)-1]) {
		return false
	}
	for i := 1; i < len(v)-1; i++ {
		if c := v[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// matchLabelValue reports whether v matches labelValueFmt.
func matchLabelValue(v string) bool { return v == "" || matchQualifiedName(v) }

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
	if !matchDNS1123Label(v) {
		if matchDNS1123Subdomain(v) {
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
	if !matchDNS1035Label(v) {
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
	if !matchDNS1123Subdomain(v) {
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
	var name string
	switch strings.Count(v, "/") {
	case 0:
		name = v
	case 1:
		var prefix string
		prefix, name, _ = strings.Cut(v, "/")
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
	if !matchQualifiedName(name) {
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
	if !matchLabelValue(v) {
		errs = append(errs, regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}
