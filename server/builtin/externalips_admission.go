package builtin

import (
	"context"

	"platd/server/registry"
)

// externalIPsDenied is DenyServiceExternalIPs' refusal, as upstream
// words it.
const externalIPsDenied = "Use of external IPs is denied by admission control"

// denyNewExternalIPs is DenyServiceExternalIPs' step: a service written
// may not bring external IPs, which would let its writer draw the
// traffic of any address to its pods. A service created with any is
// refused, and so is an update adding one the service did not have; an
// update that keeps or drops some is not.
func denyNewExternalIPs(_ context.Context, _ registry.Lookup, obj, old registry.Object) error {
	ips := listOf(mapOf(obj["spec"])["externalIPs"])
	if len(ips) == 0 {
		return nil
	}
	had := map[string]bool{}
	for _, ip := range listOf(mapOf(old["spec"])["externalIPs"]) {
		had[strOf(ip)] = true
	}
	for _, ip := range ips {
		if !had[strOf(ip)] {
			return &registry.Denial{Reason: externalIPsDenied}
		}
	}
	return nil
}
