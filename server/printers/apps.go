package printers

import (
	"fmt"
	"strings"
	"time"

	"platd/config"
	"platd/server/registry"
)

func addApps(p *Printers, _ config.Brand) {
	template := []string{"spec", "template", "spec", "containers"}
	p.add("apps", "v1", "deployments", columns(
		nameColumn(),
		readyOfDesiredColumn(),
		integerCol("Up-to-date", "string", "Pods running the current template.", "status", "updatedReplicas"),
		integerCol("Available", "string", "Pods available to serve.", "status", "availableReplicas"),
		ageColumn(),
		containersColumn(template...).wide(),
		imagesColumn(template...).wide(),
		col("Selector", "string", "Label selector of the deployment's pods.", func(o registry.Object, _ time.Time) any {
			s, err := selectorText(object(o, "spec", "selector"))
			if err != nil {
				return "<invalid>"
			}
			return s
		}).reading(field("spec", "selector")).wide(),
	))
	p.add("apps", "v1", "replicasets", columns(
		nameColumn(),
		col("Desired", "integer", "Number of pods asked for.", replicas("spec", "replicas")).reading(field("spec", "replicas")),
		integerCol("Current", "integer", "Number of pods that exist.", "status", "replicas"),
		integerCol("Ready", "integer", "Number of pods that are ready.", "status", "readyReplicas"),
		ageColumn(),
		containersColumn(template...).wide(),
		imagesColumn(template...).wide(),
		selectorColumn("Label selector of the replica set's pods.", "spec", "selector").wide(),
	))
	p.add("apps", "v1", "statefulsets", columns(
		nameColumn(),
		readyOfDesiredColumn(),
		ageColumn(),
		containersColumn(template...).wide(),
		imagesColumn(template...).wide(),
	))
	p.add("apps", "v1", "daemonsets", columns(
		nameColumn(),
		integerCol("Desired", "integer", "Nodes that should run the daemon pod.", "status", "desiredNumberScheduled"),
		integerCol("Current", "integer", "Nodes running the daemon pod.", "status", "currentNumberScheduled"),
		integerCol("Ready", "integer", "Nodes whose daemon pod is ready.", "status", "numberReady"),
		integerCol("Up-to-date", "integer", "Nodes running the current template.", "status", "updatedNumberScheduled"),
		integerCol("Available", "integer", "Nodes whose daemon pod is available.", "status", "numberAvailable"),
		col("Node Selector", "string", "Labels a node needs to run the daemon pod.", func(o registry.Object, _ time.Time) any {
			return formatLabels(stringMap(o, "spec", "template", "spec", "nodeSelector"))
		}).reading(field("spec", "template", "spec", "nodeSelector")),
		ageColumn(),
		containersColumn(template...).wide(),
		imagesColumn(template...).wide(),
		selectorColumn("Label selector of the daemon set's pods.", "spec", "selector").wide(),
	))
	p.add("apps", "v1", "controllerrevisions", columns(
		nameColumn(),
		col("Controller", "string", "Object that controls the revision, as kind.group/name.", func(o registry.Object, _ time.Time) any {
			return controllerName(o)
		}).reading(field("metadata", "ownerReferences")),
		integerCol("Revision", "string", "Revision number.", "revision"),
		ageColumn(),
	))
}

// readyOfDesiredColumn is the Ready column of "ready/desired" pods.
func readyOfDesiredColumn() column {
	return col("Ready", "string", "Ready pods out of the desired number.", readyOfDesired).
		reading(field("status", "readyReplicas"), field("spec", "replicas"))
}

// readyOfDesired is "ready/desired" pods.
func readyOfDesired(o registry.Object, _ time.Time) any {
	return fmt.Sprintf("%d/%d", num(o, "status", "readyReplicas"), replicaCount(o, "spec", "replicas"))
}

// controllerName names the owner marked as controller: its kind and group
// in lower case, then its name; "<none>" without one.
func controllerName(o registry.Object) string {
	for _, ref := range list(o, "metadata", "ownerReferences") {
		if !boolean(ref, "controller") {
			continue
		}
		kind := str(ref, "kind")
		group := ""
		if g, _, ok := strings.Cut(str(ref, "apiVersion"), "/"); ok {
			group = g
		}
		if kind == "" && group == "" {
			return str(ref, "name")
		}
		if group != "" {
			kind += "." + group
		}
		return strings.ToLower(kind) + "/" + str(ref, "name")
	}
	return none
}
