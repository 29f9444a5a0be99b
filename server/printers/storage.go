package printers

import (
	"strings"
	"time"

	"platd/config"
	"platd/server/registry"
)

func addStorage(p *Printers, b config.Brand) {
	g := b.Group("storage")
	p.add(g, "v1", "storageclasses", columns(
		col("Name", "string", "Name of the class, marked when it is the default class.", func(o registry.Object, _ time.Time) any {
			name := str(o, "metadata", "name")
			if isDefaultClass(b, stringMap(o, "metadata", "annotations")) {
				name += " (default)"
			}
			return name
		}).named(),
		col("Provisioner", "string", "Volume plugin that provisions the class's volumes.", text("provisioner")),
		col("ReclaimPolicy", "string", "What happens to a released volume of the class.", textSet("Delete", "reclaimPolicy")),
		col("VolumeBindingMode", "string", "When volumes of the class are bound.", textSet("Immediate", "volumeBindingMode")),
		col("AllowVolumeExpansion", "string", "Whether volumes of the class may grow.", boolAt(false, "allowVolumeExpansion")),
		ageColumn(),
	))
	p.add(g, "v1", "csidrivers", columns(
		nameColumn(),
		col("AttachRequired", "boolean", "Whether volumes need an attach step.", boolAt(true, "spec", "attachRequired")),
		col("PodInfoOnMount", "boolean", "Whether the driver gets pod details on mount.", boolAt(false, "spec", "podInfoOnMount")),
		col("StorageCapacity", "boolean", "Whether the scheduler weighs the driver's capacity.", boolAt(false, "spec", "storageCapacity")),
		col("TokenRequests", "string", "Audiences of the tokens the driver receives.", func(o registry.Object, _ time.Time) any {
			if !has(o, "spec", "tokenRequests") {
				return unset
			}
			var audiences []string
			for _, t := range list(o, "spec", "tokenRequests") {
				audiences = append(audiences, str(t, "audience"))
			}
			return strings.Join(audiences, ",")
		}),
		col("RequiresRepublish", "boolean", "Whether volumes are mounted again periodically.", boolAt(false, "spec", "requiresRepublish")),
		col("Modes", "string", "Volume lifecycle modes the driver supports.", func(o registry.Object, _ time.Time) any {
			if modes := strings.Join(stringList(o, "spec", "volumeLifecycleModes"), ","); modes != "" {
				return modes
			}
			return none
		}),
		ageColumn(),
	))
	p.add(g, "v1", "csinodes", columns(
		nameColumn(),
		col("Drivers", "integer", "Number of drivers registered on the node.", count("spec", "drivers")),
		ageColumn(),
	))
	p.add(g, "v1", "csistoragecapacities", columns(
		nameColumn(),
		col("StorageClassName", "string", "Storage class the capacity is for.", text("storageClassName")),
		col("Capacity", "string", "Capacity available.", func(o registry.Object, _ time.Time) any {
			if !has(o, "capacity") {
				return unset
			}
			return quantityText(at(o, "capacity"))
		}),
	))
	p.add(g, "v1", "volumeattachments", columns(
		nameColumn(),
		col("Attacher", "string", "Driver that attaches the volume.", text("spec", "attacher")).named(),
		col("PV", "string", "Persistent volume attached.", text("spec", "source", "persistentVolumeName")),
		col("Node", "string", "Node the volume is attached to.", text("spec", "nodeName")),
		col("Attached", "boolean", "Whether the volume is attached.", boolAt(false, "status", "attached")),
		ageColumn(),
	))
}

// isDefaultClass reports whether a storage class carries the default-class
// annotation, current or beta, set to "true".
func isDefaultClass(b config.Brand, annotations map[string]string) bool {
	return annotations["storageclass."+b.LongDomain+"/is-default-class"] == "true" ||
		annotations["storageclass.beta."+b.LongDomain+"/is-default-class"] == "true"
}
