package selector

import (
	"strconv"
	"strings"
)

// Length limits of label keys and values, as the API defines them: a key's
// name part and a value fit one DNS label; a key's prefix fits a DNS
// subdomain.
const (
	maxNameLength      = 63
	maxValueLength     = 63
	maxSubdomainLength = 253
)

// Validation texts, word for word as the API server prints them.
const (
	qualifiedNameFmt    = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	qualifiedNameMsg    = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	labelValueFmt       = "(" + qualifiedNameFmt + ")?"
	labelValueMsg       = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	subdomainLabelFmt   = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	subdomainFmt        = subdomainLabelFmt + "(\\." + subdomainLabelFmt + ")*"
	subdomainMsg        = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	emptyMsg            = "must be non-empty"
	prefixPart          = "prefix part "
	namePart            = "name part "
	qualifiedNameSuffix = " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
)

func maxLenMsg(n int) string {
	return "must be no more than " + strconv.Itoa(n) + " characters"
}

// regexMsg renders a pattern failure with its examples, keeping the
// upstream spacing (", " after each example, then " or ").
func regexMsg(msg, format string, examples ...string) string {
	var b strings.Builder
	b.WriteString(msg)
	b.WriteString(" (e.g. ")
	for i, e := range examples {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString("'" + e + "', ")
	}
	b.WriteString("regex used for validation is '" + format + "')")
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isQualifiedNamePart reports whether s matches qualifiedNameFmt.
func isQualifiedNamePart(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isSubdomain reports whether s matches subdomainFmt.
func isSubdomain(s string) bool {
	for label := range strings.SplitSeq(s, ".") {
		if label == "" {
			return false
		}
		first, last := label[0], label[len(label)-1]
		if !isLowerAlnum(first) || !isLowerAlnum(last) {
			return false
		}
		for i := 1; i < len(label)-1; i++ {
			if c := label[i]; !isLowerAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// qualifiedNameProblems lists why k is not a valid label key: an optional
// DNS subdomain prefix and "/", then a name. Nil means valid.
func qualifiedNameProblems(k string) []string {
	var errs []string
	name := k
	switch strings.Count(k, "/") {
	case 0:
	case 1:
		var prefix string
		prefix, name, _ = strings.Cut(k, "/")
		switch {
		case prefix == "":
			errs = append(errs, prefixPart+emptyMsg)
		default:
			if len(prefix) > maxSubdomainLength {
				errs = append(errs, prefixPart+maxLenMsg(maxSubdomainLength))
			}
			if !isSubdomain(prefix) {
				errs = append(errs, prefixPart+regexMsg(subdomainMsg, subdomainFmt, "example.com"))
			}
		}
	default:
		return []string{"a qualified name " + regexMsg(qualifiedNameMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc") + qualifiedNameSuffix}
	}
	switch {
	case name == "":
		errs = append(errs, namePart+emptyMsg)
	case len(name) > maxNameLength:
		errs = append(errs, namePart+maxLenMsg(maxNameLength))
	}
	if !isQualifiedNamePart(name) {
		errs = append(errs, namePart+regexMsg(qualifiedNameMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// labelValueProblems lists why v is not a valid label value. Nil means
// valid; the empty string is valid.
func labelValueProblems(v string) []string {
	var errs []string
	if len(v) > maxValueLength {
		errs = append(errs, maxLenMsg(maxValueLength))
	}
	if v != "" && !isQualifiedNamePart(v) {
		errs = append(errs, regexMsg(labelValueMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

// invalidValue renders one "Invalid value" field error the way the API
// server prints it: path, quoted value, detail.
func invalidValue(path, value, detail string) string {
	return path + ": Invalid value: " + strconv.Quote(value) + ": " + detail
}

// parseInt64 accepts exactly what strconv.ParseInt(s, 10, 64) accepts,
// without allocating an error on failure: an optional sign and decimal
// digits within the int64 range.
func parseInt64(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	neg := false
	switch s[0] {
	case '+':
		s = s[1:]
	case '-':
		neg = true
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	const cutoff = uint64(1) << 63 // magnitude of math.MinInt64
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > cutoff/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
		if n > cutoff {
			return 0, false
		}
	}
	if neg {
		return -int64(n), true // n == cutoff wraps to MinInt64, as intended
	}
	if n == cutoff {
		return 0, false
	}
	return int64(n), true
}
