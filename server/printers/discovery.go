package printers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"platd/config"
	"platd/server/registry"
)

func addDiscovery(p *Printers, b config.Brand) {
	p.add(b.Group("discovery"), "v1", "endpointslices", columns(
		nameColumn(),
		col("AddressType", "string", "Kind of the addresses: IPv4, IPv6 or FQDN.", text("addressType")),
		col("Ports", "string", "Port numbers (or names) of the slice, the first few.", func(o registry.Object, _ time.Time) any {
			var ports []string
			for _, port := range list(o, "ports") {
				switch {
				case has(port, "port"):
					ports = append(ports, strconv.FormatInt(num(port, "port"), 10))
				case has(port, "name"):
					ports = append(ports, str(port, "name"))
				default:
					ports = append(ports, "*")
				}
			}
			return shortList(ports)
		}),
		col("Endpoints", "string", "Addresses of the endpoints, the first few.", func(o registry.Object, _ time.Time) any {
			var addrs []string
			for _, e := range list(o, "endpoints") {
				addrs = append(addrs, stringList(e, "addresses")...)
			}
			return shortList(addrs)
		}),
		ageColumn(),
	))
}

// shortList joins the first few items, summarising the rest, or "<unset>"
// when there are none.
func shortList(items []string) string {
	if len(items) > listMax {
		return fmt.Sprintf("%s + %d more...", strings.Join(items[:listMax], ","), len(items)-listMax)
	}
	if s := strings.Join(items, ","); s != "" {
		return s
	}
	return unset
}
