package builtin

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"platd/server/apierr"
	"platd/server/validation"
)

// Messages shared by many rules, worded as upstream.
const (
	msgNegative    = "must be greater than or equal to 0"
	msgNotPositive = "must be greater than zero"
	msgImmutable   = "field is immutable"
	msgInvalidIP   = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
	msgFileMode    = "must be a number between 0 and 0777 (octal), both inclusive"
)

// Bounds of numeric fields.
const (
	maxPortNumber = 65535
	// maxUnixID bounds user and group IDs: container runtimes take them as
	// signed 32-bit numbers.
	maxUnixID = math.MaxInt32
	// maxFileMode is 0777, the largest permission mode.
	maxFileMode = 0o777
)

// inclusiveRange is upstream's message for a number outside [lo, hi].
func inclusiveRange(lo, hi int64) string {
	return fmt.Sprintf("must be between %d and %d, inclusive", lo, hi)
}

// regexMessage words a pattern error as upstream does, examples and all
// (including its doubled space before "or").
func regexMessage(msg, format string, examples ...string) string {
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

// invalidEach turns each message into an Invalid error for value at p.
// It is generic so that a valid value (no messages) is not boxed.
func invalidEach[T any](p fieldPath, value T, msgs []string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for _, m := range msgs {
		errs = append(errs, apierr.Invalid(p.String(), value, m))
	}
	return errs
}

// dnsLabel and dnsSubdomain check a value against the DNS name rules.
func dnsLabel(v string, p fieldPath) apierr.FieldErrors {
	return invalidEach(p, v, validation.IsDNS1123Label(v))
}

func dnsSubdomain(v string, p fieldPath) apierr.FieldErrors {
	return invalidEach(p, v, validation.IsDNS1123Subdomain(v))
}

func qualifiedName(v string, p fieldPath) apierr.FieldErrors {
	return invalidEach(p, v, validation.IsQualifiedName(v))
}

// validateNonNegative checks an integer member that may not be negative.
func validateNonNegative(m map[string]any, key string, p fieldPath) apierr.FieldErrors {
	if n := intAt(m, key); n < 0 {
		return apierr.FieldErrors{apierr.Invalid(p.child(key).String(), n, msgNegative)}
	}
	return nil
}

// validateFileMode checks an optional permission mode.
func validateFileMode(m map[string]any, key string, p fieldPath) apierr.FieldErrors {
	if !has(m, key) {
		return nil
	}
	if n := intAt(m, key); n < 0 || n > maxFileMode {
		return apierr.FieldErrors{apierr.Invalid(p.child(key).String(), n, msgFileMode)}
	}
	return nil
}

// validatePortNumOrName checks an int-or-string port: a number in range or
// an IANA service name.
func validatePortNumOrName(v any, p fieldPath) apierr.FieldErrors {
	if s, ok := v.(string); ok {
		return invalidEach(p, s, portNameErrors(s))
	}
	n, _ := intOf(v)
	if n < 1 || n > maxPortNumber {
		return apierr.FieldErrors{apierr.Invalid(p.String(), n, inclusiveRange(1, maxPortNumber))}
	}
	return nil
}

// maxPortNameLength is the longest IANA service name.
const maxPortNameLength = 15

// portNameErrors returns the problems of an IANA_SVC_NAME.
func portNameErrors(name string) []string {
	var errs []string
	if len(name) > maxPortNameLength {
		errs = append(errs, fmt.Sprintf("must be no more than %d characters", maxPortNameLength))
	}
	charsetOK, hasLetter := name != "", false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z':
			hasLetter = true
		case c >= '0' && c <= '9', c == '-':
		default:
			charsetOK = false
		}
	}
	if !charsetOK {
		errs = append(errs, "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
	}
	if !hasLetter {
		errs = append(errs, "must contain at least one letter (a-z)")
	}
	if strings.Contains(name, "--") {
		errs = append(errs, "must not contain consecutive hyphens")
	}
	if name != "" && (name[0] == '-' || name[len(name)-1] == '-') {
		errs = append(errs, "must not begin or end with a hyphen")
	}
	return errs
}

// validateIP checks an IP address; IPv4 octets may carry leading zeros,
// as upstream's parser still accepts them.
func validateIP(v string, p fieldPath) apierr.FieldErrors {
	if parseIPSloppy(v) == nil {
		return apierr.FieldErrors{apierr.Invalid(p.String(), v, msgInvalidIP)}
	}
	return nil
}

// notSupported is NotSupported for a closed set of string values, listed
// in the order given.
func notSupported(p fieldPath, v any, valid ...string) *apierr.FieldError {
	return apierr.NotSupported(p.String(), v, valid)
}

// sortedCopy returns the values sorted, as upstream lists a set.
func sortedCopy(v ...string) []string {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}
