package security

import (
	"os"
	"slices"
)

// DefaultHosts returns the names a locally started server is reached by:
// localhost, 127.0.0.1, ::1 and the machine's host name when it has one.
func DefaultHosts() []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if name, err := os.Hostname(); err == nil && name != "" && !slices.Contains(hosts, name) {
		hosts = append(hosts, name)
	}
	return hosts
}
