package printers

import (
	"cmp"
	"strings"
	"time"

	"platd/config"
	"platd/server/registry"
)

func addFlowControl(p *Printers, b config.Brand) {
	g := b.Group("flowcontrol.apiserver")
	p.add(g, "v1", "flowschemas", ordered(flowSchemaOrder, columns(
		nameColumn(),
		col("PriorityLevel", "string", "Priority level the matching requests go to.", text("spec", "priorityLevelConfiguration", "name")),
		col("MatchingPrecedence", "string", "Order in which schemas are matched, lowest first.", integerAt("spec", "matchingPrecedence")),
		col("DistinguisherMethod", "string", "How requests are split into flows.", func(o registry.Object, _ time.Time) any {
			if !has(o, "spec", "distinguisherMethod") {
				return none
			}
			return str(o, "spec", "distinguisherMethod", "type")
		}),
		ageColumn(),
		col("MissingPL", "string", "Whether the priority level named is missing.", func(o registry.Object, _ time.Time) any {
			for _, c := range list(o, "status", "conditions") {
				if str(c, "type") == "Dangling" {
					return str(c, "status")
				}
			}
			return "?"
		}),
	)))

	// The limited settings print as numbers; an exempt level, or one that
	// rejects rather than queues, has "<none>" for those it lacks.
	within := func(parent []string, field string) cellFunc {
		return func(o registry.Object, _ time.Time) any {
			if !has(o, parent...) {
				return none
			}
			return num(o, append(parent[:len(parent):len(parent)], field)...)
		}
	}
	limited := func(field string) cellFunc { return within([]string{"spec", "limited"}, field) }
	queuing := func(field string) cellFunc {
		return within([]string{"spec", "limited", "limitResponse", "queuing"}, field)
	}
	p.add(g, "v1", "prioritylevelconfigurations", columns(
		nameColumn(),
		col("Type", "string", "Whether the level is limited or exempt.", text("spec", "type")),
		col("NominalConcurrencyShares", "string", "Share of the server's concurrency the level gets.", limited("nominalConcurrencyShares")),
		col("Queues", "string", "Number of queues of the level.", queuing("queues")),
		col("HandSize", "string", "Queues each flow is dealt.", queuing("handSize")),
		col("QueueLengthLimit", "string", "Requests a queue may hold.", queuing("queueLengthLimit")),
		ageColumn(),
	))
}

// flowSchemaOrder orders flow schemas by matching precedence, then name.
func flowSchemaOrder(a, b registry.Object) int {
	if pa, pb := num(a, "spec", "matchingPrecedence"), num(b, "spec", "matchingPrecedence"); pa != pb {
		return cmp.Compare(pa, pb)
	}
	return strings.Compare(str(a, "metadata", "name"), str(b, "metadata", "name"))
}
