package config

import (
	"fmt"
	"net"
	"strings"
)

// validateTLSSANs checks that each --tls-san is an IP address or a DNS
// name a certificate can carry (a leading "*." allowed).
func validateTLSSANs(sans []string) []string {
	var errs []string
	for _, s := range sans {
		if net.ParseIP(s) == nil && !isDNSName(strings.TrimPrefix(s, "*.")) {
			errs = append(errs, fmt.Sprintf("--tls-san %q: want a DNS name such as api.example.com (or *.example.com) or an IP address", s))
		}
	}
	return errs
}

// isDNSName reports whether s is dot-separated labels of letters, digits
// and inner hyphens, at most 63 bytes each and 253 in all.
func isDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
