package jsonschema

import (
	"encoding/hex"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The string formats a custom resource's values are checked against: the
// formats upstream supports for CRDs (v1.32), each checked as upstream's
// format registry does. Other formats are ignored, as upstream strips
// them from the schema before validating.
var stringFormats = map[string]func(string) bool{
	"bsonobjectid": isBSONObjectID,
	"uri":          isRequestURI,
	"email":        isEmail,
	"hostname":     isHostname,
	"ipv4":         isIPv4,
	"ipv6":         isIPv6,
	"cidr":         isCIDR,
	"mac":          isMAC,
	"uuid":         func(s string) bool { return rxUUID().MatchString(s) },
	"uuid3":        func(s string) bool { return rxUUID3().MatchString(s) },
	"uuid4":        func(s string) bool { return rxUUID4().MatchString(s) },
	"uuid5":        func(s string) bool { return rxUUID5().MatchString(s) },
	"isbn":         func(s string) bool { return isISBN10(s) || isISBN13(s) },
	"isbn10":       isISBN10,
	"isbn13":       isISBN13,
	"creditcard":   isCreditCard,
	"ssn":          isSSN,
	"hexcolor":     func(s string) bool { return rxHexColor().MatchString(s) },
	"rgbcolor":     func(s string) bool { return rxRGBColor().MatchString(s) },
	"byte":         isBase64,
	"password":     func(string) bool { return true },
	"date":         isDate,
	"duration":     isDuration,
	"datetime":     isDateTime,
}

// normalizeFormat spells a format name as the registry does: without
// dashes, so "date-time" is "datetime".
func normalizeFormat(f string) string { return strings.ReplaceAll(f, "-", "") }

// supportedFormat is the node's format if upstream supports it for custom
// resources (v1.32), whatever the node's type; other formats, int32 and
// int64 included, are dropped before validation as upstream does.
func supportedFormat(p *Props) string {
	if knownFormat(p.Format) {
		return p.Format
	}
	return ""
}

// knownFormat reports whether a format has a string check.
func knownFormat(f string) bool {
	_, ok := stringFormats[normalizeFormat(f)]
	return ok
}

// validFormat checks a string against a known format.
func validFormat(f, s string) bool {
	check, ok := stringFormats[normalizeFormat(f)]
	return !ok || check(s)
}

var (
	rxHostname     = lazyRegexp(`^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$`)
	rxUUID         = lazyRegexp(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$`)
	rxUUID3        = lazyRegexp(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$`)
	rxUUID4        = lazyRegexp(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$`)
	rxUUID5        = lazyRegexp(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$`)
	rxHexColor     = lazyRegexp(`^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)
	rxRGBColor     = lazyRegexp(`^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$`)
	rxSSN          = lazyRegexp(`^\d{3}[- ]?\d{2}[- ]?\d{4}$`)
	rxISBN10       = lazyRegexp(`^(?:[0-9]{9}X|[0-9]{10})$`)
	rxISBN13       = lazyRegexp(`^(?:[0-9]{13})$`)
	rxCard         = lazyRegexp(`^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$`)
	rxSpaceOrMinus = lazyRegexp(`[\s-]+`)
	rxNotNumber    = lazyRegexp(`[^0-9]+`)
	rxTime         = lazyRegexp(`^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$`)
	rxBase64       = lazyRegexp(`^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$`)
	rxDurationPart = lazyRegexp(`((\d+)\s*([A-Za-zµ]+))`)
)

func isHostname(s string) bool {
	if !rxHostname().MatchString(s) || len(s) > 255 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if len(label) > 63 {
			return false
		}
	}
	return true
}

func isEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address != ""
}

func isRequestURI(s string) bool {
	_, err := url.ParseRequestURI(s)
	return err == nil
}

// sloppyIPv4 rewrites a dotted quad whose parts carry leading zeros into
// the form Go's parser accepts: upstream parses addresses leniently.
func sloppyIPv4(s string) string {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return s
	}
	for i, p := range parts {
		if len(p) < 2 || p[0] != '0' {
			continue
		}
		t := strings.TrimLeft(p, "0")
		if t == "" {
			t = "0"
		}
		parts[i] = t
	}
	return strings.Join(parts, ".")
}

func parseIP(s string) net.IP {
	if ip := net.ParseIP(s); ip != nil {
		return ip
	}
	return net.ParseIP(sloppyIPv4(s))
}

func isIPv4(s string) bool { return parseIP(s) != nil && strings.Contains(s, ".") }

func isIPv6(s string) bool { return net.ParseIP(s) != nil && strings.Contains(s, ":") }

func isCIDR(s string) bool {
	if _, _, err := net.ParseCIDR(s); err == nil {
		return true
	}
	addr, bits, ok := strings.Cut(s, "/")
	if !ok {
		return false
	}
	_, _, err := net.ParseCIDR(sloppyIPv4(addr) + "/" + bits)
	return err == nil
}

func isMAC(s string) bool {
	_, err := net.ParseMAC(s)
	return err == nil
}

func isBSONObjectID(s string) bool {
	if len(s) != 24 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func isISBN10(s string) bool {
	s = rxSpaceOrMinus().ReplaceAllString(s, "")
	if !rxISBN10().MatchString(s) {
		return false
	}
	sum := 0
	for i := 0; i < 9; i++ {
		sum += (i + 1) * int(s[i]-'0')
	}
	if s[9] == 'X' {
		sum += 100
	} else {
		sum += 10 * int(s[9]-'0')
	}
	return sum%11 == 0
}

func isISBN13(s string) bool {
	s = rxSpaceOrMinus().ReplaceAllString(s, "")
	if !rxISBN13().MatchString(s) {
		return false
	}
	sum := 0
	for i := 0; i < 12; i++ {
		f := 1
		if i%2 == 1 {
			f = 3
		}
		sum += f * int(s[i]-'0')
	}
	return int(s[12]-'0')-(10-sum%10)%10 == 0
}

// isCreditCard matches the card number patterns and the Luhn checksum,
// ignoring anything but digits.
func isCreditCard(s string) bool {
	s = rxNotNumber().ReplaceAllString(s, "")
	if !rxCard().MatchString(s) {
		return false
	}
	sum, double := 0, false
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if double {
			d *= 2
			if d >= 10 {
				d = d%10 + 1
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

func isSSN(s string) bool { return len(s) == 11 && rxSSN().MatchString(s) }

func isBase64(s string) bool { return rxBase64().MatchString(s) }

func isDate(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// isDateTime accepts an RFC 3339 date-time, case-insensitively.
func isDateTime(s string) bool {
	if len(s) < 4 {
		return false
	}
	parts := strings.Split(strings.ToLower(s), "t")
	if len(parts) < 2 || !isDate(parts[0]) {
		return false
	}
	m := rxTime().FindStringSubmatch(parts[1])
	if m == nil {
		return false
	}
	return m[1] <= "23" && m[2] <= "59" && m[3] <= "59"
}

// durationUnits are the unit spellings a duration may use beside Go's:
// the last spelling of each also matches as a prefix ("hours").
var durationUnits = [][]string{
	{"ns", "nano"},
	{"us", "µs", "micro"},
	{"ms", "milli"},
	{"s", "sec"},
	{"m", "min"},
	{"h", "hr", "hour"},
	{"d", "day"},
	{"w", "wk", "week"},
}

// isDuration accepts a Go duration, or any string holding "<n> <unit>"
// with a known unit (upstream looks for such parts anywhere in it).
func isDuration(s string) bool {
	if _, err := time.ParseDuration(s); err == nil {
		return true
	}
	ok := false
	for _, m := range rxDurationPart().FindAllStringSubmatch(s, -1) {
		if _, err := strconv.Atoi(m[2]); err != nil {
			return false
		}
		unit := strings.ToLower(strings.TrimSpace(m[3]))
		for _, variants := range durationUnits {
			last := len(variants) - 1
			for i, v := range variants {
				if i == last && strings.HasPrefix(unit, v) || strings.EqualFold(v, unit) {
					ok = true
				}
			}
		}
	}
	return ok
}
