package printers

import (
	"platd/config"
	"platd/server/registry"
)

// Descriptions of the replica columns of every Scale table.
const (
	desiredDescription   = "Replicas asked for."
	availableDescription = "Replicas that exist."
)

// scaleTable prints an autoscaling/v1 Scale, which the scale subresources
// serve. Upstream's Name column here carries no name format.
func scaleTable() *registry.Table {
	return columns(
		col("Name", "string", "Name of the scaled object.", text("metadata", "name")),
		col("Desired", "integer", desiredDescription, integerAt("spec", "replicas")),
		col("Available", "integer", availableDescription, integerAt("status", "replicas")),
		ageColumn(),
	)
}

// addScale registers the Scale table under "<resource>/scale" of every
// resource with a scale subresource.
func addScale(p *Printers, _ config.Brand) {
	for _, r := range []struct{ group, resource string }{
		{"", "replicationcontrollers"},
		{"apps", "deployments"}, {"apps", "replicasets"}, {"apps", "statefulsets"},
	} {
		p.add(r.group, "v1", r.resource+"/scale", scaleTable())
	}
}
