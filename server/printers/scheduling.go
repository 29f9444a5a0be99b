package printers

import (
	"platd/config"
)

func addScheduling(p *Printers, b config.Brand) {
	p.add(b.Group("scheduling"), "v1", "priorityclasses", columns(
		nameColumn(),
		col("Value", "integer", "Priority of the pods of the class.", integerAt("value")),
		col("Global-Default", "boolean", "Whether pods without a class get this one.", boolAt(false, "globalDefault")),
		ageColumn(),
		col("PreemptionPolicy", "string", "Whether pods of the class may preempt others.", text("preemptionPolicy")),
	))
}

func addNode(p *Printers, b config.Brand) {
	p.add(b.Group("node"), "v1", "runtimeclasses", columns(
		nameColumn(),
		col("Handler", "string", "Container runtime handler the class selects.", text("handler")),
		ageColumn(),
	))
}

func addCoordination(p *Printers, b config.Brand) {
	p.add(b.Group("coordination"), "v1", "leases", columns(
		nameColumn(),
		col("Holder", "string", "Identity of the lease's holder.", text("spec", "holderIdentity")),
		ageColumn(),
	))
}
