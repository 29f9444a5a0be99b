package printers

import (
	"fmt"
	"time"

	"platd/config"
	"platd/server/registry"
)

func addAPIRegistration(p *Printers, b config.Brand) {
	p.add(b.Group("apiregistration"), "v1", "apiservices", columns(
		nameColumn(),
		col("Service", "string", "Service that serves the API, or Local.", func(o registry.Object, _ time.Time) any {
			if !has(o, "spec", "service") {
				return "Local"
			}
			return fmt.Sprintf("%s/%s", str(o, "spec", "service", "namespace"), str(o, "spec", "service", "name"))
		}),
		col("Available", "string", "Status of the Available condition, with its reason when not true.", func(o registry.Object, _ time.Time) any {
			for _, c := range list(o, "status", "conditions") {
				if str(c, "type") != "Available" {
					continue
				}
				status, reason := str(c, "status"), str(c, "reason")
				if status != "True" && reason != "" {
					return fmt.Sprintf("%s (%s)", status, reason)
				}
				return status
			}
			return "Unknown"
		}),
		ageColumn(),
	))
}
