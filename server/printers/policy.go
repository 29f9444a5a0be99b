package printers

import (
	"strconv"
	"time"

	"platd/config"
	"platd/server/registry"
)

func addPolicy(p *Printers, _ config.Brand) {
	p.add("policy", "v1", "poddisruptionbudgets", columns(
		nameColumn(),
		col("Min Available", "string", "Pods that must stay available, as a number or percentage.", intOrString("spec", "minAvailable")),
		col("Max Unavailable", "string", "Pods that may be unavailable, as a number or percentage.", intOrString("spec", "maxUnavailable")),
		col("Allowed Disruptions", "integer", "Pods that may be disrupted now.", integerAt("status", "disruptionsAllowed")),
		ageColumn(),
	))
}

// intOrString prints an int-or-string field, "N/A" when unset.
func intOrString(path ...string) cellFunc {
	return func(o registry.Object, _ time.Time) any {
		switch v := at(o, path...).(type) {
		case string:
			return v
		case nil:
			return "N/A"
		default:
			n, _ := integerOf(v)
			return strconv.FormatInt(n, 10)
		}
	}
}
