package printers

import (
	"time"

	"platd/config"
	"platd/server/registry"
)

func addCertificates(p *Printers, b config.Brand) {
	p.add(b.Group("certificates"), "v1", "certificatesigningrequests", columns(
		nameColumn(),
		ageColumn(),
		col("SignerName", "string", "Signer asked to sign the request.", textOr(none, "spec", "signerName")),
		col("Requestor", "string", "User who made the request.", text("spec", "username")),
		col("RequestedDuration", "string", "Validity asked for the certificate.", func(o registry.Object, _ time.Time) any {
			secs, ok := integer(o, "spec", "expirationSeconds")
			if !ok {
				return none
			}
			return HumanDuration(time.Duration(secs) * time.Second)
		}),
		col("Condition", "string", "Approval state, then whether signing failed or a certificate was issued.", func(o registry.Object, _ time.Time) any {
			return csrCondition(o)
		}),
	))
}

// csrCondition is Denied, Approved or Pending (denial winning), then
// ",Failed" and ",Issued" as they apply.
func csrCondition(o registry.Object) string {
	var approved, denied, failed bool
	for _, c := range list(o, "status", "conditions") {
		switch str(c, "type") {
		case "Approved":
			approved = true
		case "Denied":
			denied = true
		case "Failed":
			failed = true
		}
	}
	status := "Pending"
	switch {
	case denied:
		status = "Denied"
	case approved:
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if str(o, "status", "certificate") != "" {
		status += ",Issued"
	}
	return status
}
