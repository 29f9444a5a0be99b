package builtin

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"platd/server/apierr"
	"platd/server/validation"
)

// Limits of names used on the network.
const (
	// portNameMax is the longest port name, as IANA service names.
	portNameMax = 15
	// portMax is the highest port number.
	portMax = 65535
)

const (
	dns1123LabelFmt    = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	wildcardDomainFmt  = "\\*\\." + dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	domainPathFmt      = `[A-Za-z0-9/\-._~%!$&'()*+,;=:]+`
	portNameCharsetFmt = "^[-a-z0-9]+$"
)

var (
	wildcardDomainRe  = lazyRegexp("^" + wildcardDomainFmt + "$")
	domainPathRe      = lazyRegexp("^" + domainPathFmt + "$")
	portNameCharsetRe = lazyRegexp(portNameCharsetFmt)
	portNameLetterRe  = lazyRegexp("[a-z]")
)

func maxLenMsg(n int) string { return fmt.Sprintf("must be no more than %d characters", n) }

// isDNS1035Label returns the problems of a DNS-1035 label (service names).
func isDNS1035Label(v string) []string { return validation.IsDNS1035Label(v) }

// isWildcardDNS1123Subdomain returns the problems of "*." and a subdomain.
func isWildcardDNS1123Subdomain(v string) []string {
	var errs []string
	if len(v) > validation.DNS1123SubdomainMaxLength {
		errs = append(errs, maxLenMsg(validation.DNS1123SubdomainMaxLength))
	}
	if !wildcardDomainRe().MatchString(v) {
		errs = append(errs, regexMessage("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character", wildcardDomainFmt, "*.example.com"))
	}
	return errs
}

// isFullyQualifiedDomainName checks a domain of at least two labels, an
// optional trailing dot aside.
func isFullyQualifiedDomainName(path, name string) apierr.FieldErrors {
	if name == "" {
		return apierr.FieldErrors{apierr.Required(path, "")}
	}
	name = strings.TrimSuffix(name, ".")
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return apierr.FieldErrors{apierr.Invalid(path, name, strings.Join(errs, ","))}
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return apierr.FieldErrors{apierr.Invalid(path, name, "should be a domain with at least two segments separated by dots")}
	}
	for _, l := range labels {
		if errs := validation.IsDNS1123Label(l); len(errs) > 0 {
			return apierr.FieldErrors{apierr.Invalid(path, l, strings.Join(errs, ","))}
		}
	}
	return nil
}

// isDomainPrefixedPath checks "<domain>/<path>", such as an ingress
// controller name.
func isDomainPrefixedPath(path, v string) apierr.FieldErrors {
	if v == "" {
		return apierr.FieldErrors{apierr.Required(path, "")}
	}
	host, rest, ok := strings.Cut(v, "/")
	if !ok || host == "" || rest == "" {
		return apierr.FieldErrors{apierr.Invalid(path, v, `must be a domain-prefixed path (such as "acme.io/foo")`)}
	}
	var errs apierr.FieldErrors
	for _, msg := range validation.IsDNS1123Subdomain(host) {
		errs = append(errs, apierr.Invalid(path, host, msg))
	}
	if !domainPathRe().MatchString(rest) {
		errs = append(errs, apierr.Invalid(path, rest, regexMessage("must be a valid path", domainPathFmt)))
	}
	return errs
}

// isValidPortNum returns the problem of a port number, if any.
func isValidPortNum(n int64) []string {
	if n >= 1 && n <= portMax {
		return nil
	}
	return []string{fmt.Sprintf("must be between %d and %d, inclusive", 1, portMax)}
}

// isValidPortName returns the problems of a named port (an IANA service
// name).
func isValidPortName(v string) []string {
	var errs []string
	if len(v) > portNameMax {
		errs = append(errs, maxLenMsg(portNameMax))
	}
	if !portNameCharsetRe().MatchString(v) {
		errs = append(errs, "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
	}
	if !portNameLetterRe().MatchString(v) {
		errs = append(errs, "must contain at least one letter (a-z)")
	}
	if strings.Contains(v, "--") {
		errs = append(errs, "must not contain consecutive hyphens")
	}
	if v != "" && (v[0] == '-' || v[len(v)-1] == '-') {
		errs = append(errs, "must not begin or end with a hyphen")
	}
	return errs
}

// parseIPSloppy parses an IP address as upstream's validation does: IPv4
// parts may carry leading zeros, read as decimal.
func parseIPSloppy(s string) net.IP {
	if strings.Contains(s, ":") {
		return net.ParseIP(s)
	}
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return nil
	}
	var b [4]byte
	for i, p := range parts {
		if p == "" || strings.TrimLeft(p, "0123456789") != "" {
			return nil
		}
		n, err := strconv.Atoi(p)
		if err != nil || n > 255 {
			return nil
		}
		b[i] = byte(n)
	}
	return net.IPv4(b[0], b[1], b[2], b[3])
}

// parseCIDRSloppy parses "<ip>/<bits>" with parseIPSloppy's leniency and
// returns the network.
func parseCIDRSloppy(s string) (*net.IPNet, bool) {
	addr, bits, ok := strings.Cut(s, "/")
	if !ok {
		return nil, false
	}
	ip := parseIPSloppy(addr)
	if ip == nil || bits == "" || strings.TrimLeft(bits, "0123456789") != "" {
		return nil, false
	}
	size := net.IPv6len * 8
	if ip4 := ip.To4(); ip4 != nil && !strings.Contains(addr, ":") {
		ip, size = ip4, net.IPv4len*8
	}
	n, err := strconv.Atoi(bits)
	if err != nil || n > size {
		return nil, false
	}
	mask := net.CIDRMask(n, size)
	return &net.IPNet{IP: ip.Mask(mask), Mask: mask}, true
}

// validateEndpointIP refuses addresses that make no sense as a
// destination: unspecified, loopback and link-local ones.
func validateEndpointIP(path, addr string) apierr.FieldErrors {
	ip := parseIPSloppy(addr)
	if ip == nil {
		return apierr.FieldErrors{apierr.Invalid(path, addr, "must be a valid IP address")}
	}
	var errs apierr.FieldErrors
	if ip.IsUnspecified() {
		errs = append(errs, apierr.Invalid(path, addr, fmt.Sprintf("may not be unspecified (%v)", addr)))
	}
	if ip.IsLoopback() {
		errs = append(errs, apierr.Invalid(path, addr, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		errs = append(errs, apierr.Invalid(path, addr, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		errs = append(errs, apierr.Invalid(path, addr, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}
