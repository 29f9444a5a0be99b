package printers

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"platd/config"
	"platd/server/registry"
	"platd/server/schema"
)

func addCore(p *Printers, b config.Brand) {
	p.add("", "v1", "pods", podTable())
	p.add("", "v1", "events", eventTable(coreEventFields))
	p.add("", "v1", "nodes", nodeTable(b))
	p.add("", "v1", "persistentvolumes", persistentVolumeTable(b))
	p.add("", "v1", "persistentvolumeclaims", persistentVolumeClaimTable(b))
	p.add("", "v1", "services", serviceTable())
	p.add("", "v1", "resourcequotas", resourceQuotaTable())

	p.add("", "v1", "podtemplates", columns(
		nameColumn(),
		containersColumn("template", "spec", "containers"),
		imagesColumn("template", "spec", "containers"),
		col("Pod Labels", "string", "Labels of the pods made from the template.", func(o registry.Object, _ time.Time) any {
			return formatLabels(stringMap(o, "template", "metadata", "labels"))
		}).reading(field("template", "metadata", "labels")),
	))
	p.add("", "v1", "replicationcontrollers", columns(
		nameColumn(),
		col("Desired", "integer", "Number of pods asked for.", replicas("spec", "replicas")).reading(field("spec", "replicas")),
		integerCol("Current", "integer", "Number of pods that exist.", "status", "replicas"),
		integerCol("Ready", "integer", "Number of pods that are ready.", "status", "readyReplicas"),
		ageColumn(),
		containersColumn("spec", "template", "spec", "containers").wide(),
		imagesColumn("spec", "template", "spec", "containers").wide(),
		col("Selector", "string", "Labels the controlled pods carry.", func(o registry.Object, _ time.Time) any {
			return formatLabels(stringMap(o, "spec", "selector"))
		}).reading(field("spec", "selector")).wide(),
	))
	p.add("", "v1", "endpoints", columns(
		nameColumn(),
		col("Endpoints", "string", "Addresses and ports of the endpoints, the first few.", func(o registry.Object, _ time.Time) any {
			return formatEndpoints(list(o, "subsets"))
		}),
		ageColumn(),
	))
	p.add("", "v1", "namespaces", columns(
		nameColumn(),
		colOf("Status", "string", "Phase of the namespace.", []schema.FieldPath{field("status", "phase")}, textValue),
		ageColumn(),
	))
	p.add("", "v1", "secrets", columns(
		nameColumn(),
		colOf("Type", "string", "Type of the secret.", []schema.FieldPath{field("type")}, textValue),
		colOf("Data", "string", "Number of data keys.", []schema.FieldPath{counted("data")}, countValue),
		ageColumn(),
	))
	p.add("", "v1", "serviceaccounts", columns(
		nameColumn(),
		colOf("Secrets", "string", "Number of secrets listed.", []schema.FieldPath{counted("secrets")}, countValue),
		ageColumn(),
	))
	p.add("", "v1", "configmaps", columns(
		nameColumn(),
		colOf("Data", "string", "Number of data and binary data keys.", []schema.FieldPath{counted("data"), counted("binaryData")},
			func(v []any, _ time.Time) any { return v[0].(int64) + v[1].(int64) }),
		ageColumn(),
	))
	p.add("", "v1", "componentstatuses", componentStatusTable())
}

// defaultReplicas is what an unset replica count means for the replicated
// workloads: upstream defaults it on every decode, stored objects included.
const defaultReplicas = 1

// replicas reads a replica count, unset meaning the default.
func replicas(path ...string) cellFunc {
	return func(o registry.Object, _ time.Time) any { return replicaCount(o, path...) }
}

func replicaCount(o registry.Object, path ...string) int64 {
	if n, ok := integer(o, path...); ok {
		return n
	}
	return defaultReplicas
}

// listMax is how many entries an address or host list cell shows before
// it summarises the rest as "+ N more...".
const listMax = 3

// formatEndpoints lists "ip:port" for every address and port of the
// subsets (bare addresses when a subset has no ports), the first few only.
func formatEndpoints(subsets []any) string {
	if len(subsets) == 0 {
		return none
	}
	var shown []string
	total := 0
	add := func(s string) {
		total++
		if len(shown) < listMax {
			shown = append(shown, s)
		}
	}
	for _, ss := range subsets {
		addrs := list(ss, "addresses")
		ports := list(ss, "ports")
		if len(ports) == 0 {
			for _, a := range addrs {
				add(str(a, "ip"))
			}
			continue
		}
		for _, port := range ports {
			for _, a := range addrs {
				add(net.JoinHostPort(str(a, "ip"), strconv.FormatInt(num(port, "port"), 10)))
			}
		}
	}
	out := strings.Join(shown, ",")
	if total > listMax {
		return fmt.Sprintf("%s + %d more...", out, total-listMax)
	}
	return out
}

func serviceTable() *registry.Table {
	return columns(
		nameColumn(),
		col("Type", "string", "How the service is exposed.", text("spec", "type")),
		col("Cluster-IP", "string", "Cluster address of the service.", func(o registry.Object, _ time.Time) any {
			if ips := stringList(o, "spec", "clusterIPs"); len(ips) > 0 {
				return ips[0]
			}
			if ip := str(o, "spec", "clusterIP"); ip != "" {
				return ip
			}
			return none
		}),
		col("External-IP", "string", "Addresses the service is reachable at from outside.", func(o registry.Object, _ time.Time) any {
			return serviceExternalIP(o)
		}),
		col("Port(s)", "string", "Ports the service exposes.", func(o registry.Object, _ time.Time) any {
			return servicePorts(list(o, "spec", "ports"))
		}),
		ageColumn(),
		col("Selector", "string", "Labels of the pods the service sends traffic to.", func(o registry.Object, _ time.Time) any {
			return formatLabels(stringMap(o, "spec", "selector"))
		}).wide(),
	)
}

func serviceExternalIP(o registry.Object) string {
	external := stringList(o, "spec", "externalIPs")
	switch str(o, "spec", "type") {
	case "ClusterIP", "NodePort":
		if len(external) > 0 {
			return strings.Join(external, ",")
		}
		return none
	case "LoadBalancer":
		lb := loadBalancerAddresses(list(o, "status", "loadBalancer", "ingress"))
		if len(external) > 0 {
			return strings.Join(append(lb, external...), ",")
		}
		if len(lb) > 0 {
			return strings.Join(lb, ",")
		}
		return "<pending>"
	case "ExternalName":
		return str(o, "spec", "externalName")
	}
	return unknown
}

// loadBalancerAddresses is the sorted set of a load balancer's ingress
// points: each one's IP, or its hostname when it has no IP.
func loadBalancerAddresses(ingress []any) []string {
	var out []string
	for _, in := range ingress {
		a := str(in, "ip")
		if a == "" {
			a = str(in, "hostname")
		}
		if a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// servicePorts renders ports as "port/protocol", or "port:nodePort/protocol"
// when a node port is allocated.
func servicePorts(ports []any) string {
	if len(ports) == 0 {
		return none
	}
	parts := make([]string, len(ports))
	for i, p := range ports {
		if np := num(p, "nodePort"); np > 0 {
			parts[i] = fmt.Sprintf("%d:%d/%s", num(p, "port"), np, str(p, "protocol"))
		} else {
			parts[i] = fmt.Sprintf("%d/%s", num(p, "port"), str(p, "protocol"))
		}
	}
	return strings.Join(parts, ",")
}

func nodeTable(b config.Brand) *registry.Table {
	unknown := func(path ...string) cellFunc { return textOr(unknown, path...) }
	return columns(
		nameColumn(),
		col("Status", "string", "Readiness of the node, and whether scheduling is off.", func(o registry.Object, _ time.Time) any {
			return nodeStatus(o)
		}).reading(field("status", "conditions"), field("spec", "unschedulable")),
		col("Roles", "string", "Roles the node's labels give it.", func(o registry.Object, _ time.Time) any {
			if roles := nodeRoles(b, stringMap(o, "metadata", "labels")); len(roles) > 0 {
				return strings.Join(roles, ",")
			}
			return none
		}).reading(field("metadata", "labels")),
		ageColumn(),
		col("Version", "string", "Version of the node agent.", text("status", "nodeInfo", "kubeletVersion")).reading(field("status", "nodeInfo")),
		col("Internal-IP", "string", "First internal address of the node.", nodeAddress("InternalIP")).reading(field("status", "addresses")).wide(),
		col("External-IP", "string", "First external address of the node.", nodeAddress("ExternalIP")).reading(field("status", "addresses")).wide(),
		col("OS-Image", "string", "Operating system image of the node.", unknown("status", "nodeInfo", "osImage")).reading(field("status", "nodeInfo")).wide(),
		col("Kernel-Version", "string", "Kernel version of the node.", unknown("status", "nodeInfo", "kernelVersion")).reading(field("status", "nodeInfo")).wide(),
		col("Container-Runtime", "string", "Container runtime and its version.", unknown("status", "nodeInfo", "containerRuntimeVersion")).
			reading(field("status", "nodeInfo")).wide(),
	)
}

// nodeStatus is "Ready" or "NotReady" from the Ready condition (the last
// one when repeated), "Unknown" without one, then ",SchedulingDisabled"
// for a cordoned node.
func nodeStatus(o registry.Object) string {
	status := "Unknown"
	for _, c := range list(o, "status", "conditions") {
		if str(c, "type") != "Ready" {
			continue
		}
		if str(c, "status") == "True" {
			status = "Ready"
		} else {
			status = "NotReady"
		}
	}
	if boolean(o, "spec", "unschedulable") {
		status += ",SchedulingDisabled"
	}
	return status
}

// nodeRoles are the sorted, distinct roles named by node-role label keys
// and by the role label's value.
func nodeRoles(b config.Brand, labels map[string]string) []string {
	prefix := "node-role." + b.LongDomain + "/"
	roleLabel := b.Label("role")
	var roles []string
	for k, v := range labels {
		role := ""
		switch {
		case strings.HasPrefix(k, prefix):
			role = strings.TrimPrefix(k, prefix)
		case k == roleLabel:
			role = v
		}
		if role != "" && !slices.Contains(roles, role) {
			roles = append(roles, role)
		}
	}
	slices.Sort(roles)
	return roles
}

func nodeAddress(kind string) cellFunc {
	return func(o registry.Object, _ time.Time) any {
		for _, a := range list(o, "status", "addresses") {
			if str(a, "type") == kind {
				return str(a, "address")
			}
		}
		return none
	}
}

// accessModes renders access modes as their short forms, each once, in
// the fixed order RWO, ROX, RWX, RWOP.
func accessModes(modes []string) string {
	var out []string
	for _, m := range []struct{ mode, short string }{
		{"ReadWriteOnce", "RWO"}, {"ReadOnlyMany", "ROX"}, {"ReadWriteMany", "RWX"}, {"ReadWriteOncePod", "RWOP"},
	} {
		if slices.Contains(modes, m.mode) {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

// storageClassAnnotation is the legacy annotation that names a volume's or
// claim's class and wins over the spec field.
func storageClassAnnotation(b config.Brand) string {
	return "volume.beta." + b.LongDomain + "/storage-class"
}

// unset is what a cell shows for an optional field left unset.
const unset = "<unset>"

func persistentVolumeTable(b config.Brand) *registry.Table {
	return columns(
		nameColumn(),
		col("Capacity", "string", "Storage size of the volume.", func(o registry.Object, _ time.Time) any {
			return quantityText(at(o, "spec", "capacity", "storage"))
		}),
		col("Access Modes", "string", "Ways the volume can be mounted.", func(o registry.Object, _ time.Time) any {
			return accessModes(stringList(o, "spec", "accessModes"))
		}),
		col("Reclaim Policy", "string", "What happens to the volume when its claim goes.", text("spec", "persistentVolumeReclaimPolicy")),
		col("Status", "string", "Phase of the volume.", terminatingOr("status", "phase")),
		col("Claim", "string", "Claim bound to the volume.", func(o registry.Object, _ time.Time) any {
			if !has(o, "spec", "claimRef") {
				return ""
			}
			return str(o, "spec", "claimRef", "namespace") + "/" + str(o, "spec", "claimRef", "name")
		}),
		col("StorageClass", "string", "Storage class of the volume.", func(o registry.Object, _ time.Time) any {
			if class, ok := strOK(o, "metadata", "annotations", storageClassAnnotation(b)); ok {
				return class
			}
			return str(o, "spec", "storageClassName")
		}),
		col("VolumeAttributesClass", "string", "Volume attributes class of the volume.", textSet(unset, "spec", "volumeAttributesClassName")),
		col("Reason", "string", "Why the volume is in its phase.", text("status", "reason")),
		ageColumn(),
		col("VolumeMode", "string", "Whether the volume is a filesystem or a block device.", textSet(unset, "spec", "volumeMode")).wide(),
	)
}

func persistentVolumeClaimTable(b config.Brand) *registry.Table {
	bound := func(o registry.Object) bool { return str(o, "spec", "volumeName") != "" }
	return columns(
		nameColumn(),
		col("Status", "string", "Phase of the claim.", terminatingOr("status", "phase")),
		col("Volume", "string", "Volume bound to the claim.", text("spec", "volumeName")),
		col("Capacity", "string", "Storage size of the bound volume.", func(o registry.Object, _ time.Time) any {
			if !bound(o) {
				return ""
			}
			return quantityText(at(o, "status", "capacity", "storage"))
		}),
		col("Access Modes", "string", "Ways the bound volume can be mounted.", func(o registry.Object, _ time.Time) any {
			if !bound(o) {
				return ""
			}
			return accessModes(stringList(o, "status", "accessModes"))
		}),
		col("StorageClass", "string", "Storage class the claim asks for.", func(o registry.Object, _ time.Time) any {
			if class, ok := strOK(o, "metadata", "annotations", storageClassAnnotation(b)); ok {
				return class
			}
			return str(o, "spec", "storageClassName")
		}),
		col("VolumeAttributesClass", "string", "Volume attributes class the claim asks for.", textSet(unset, "spec", "volumeAttributesClassName")),
		ageColumn(),
		col("VolumeMode", "string", "Whether the claim wants a filesystem or a block device.", textSet(unset, "spec", "volumeMode")).wide(),
	)
}

// terminatingOr reads a phase at path, or "Terminating" once the object is
// being deleted.
func terminatingOr(path ...string) cellFunc {
	return func(o registry.Object, _ time.Time) any {
		if has(o, "metadata", "deletionTimestamp") {
			return "Terminating"
		}
		return str(o, path...)
	}
}

// resourceQuotaTable lists "resource: used/hard" for every hard limit, by
// resource name; names under "limits." go in the Limit cell, the rest in
// Request.
func resourceQuotaTable() *registry.Table {
	split := func(o registry.Object) (request, limit string) {
		hard := object(o, "status", "hard")
		var req, lim []string
		for _, name := range sortedKeys(hard) {
			entry := fmt.Sprintf("%s: %s/%s", name, quantityText(at(o, "status", "used", name)), quantityText(hard[name]))
			if first, _, ok := strings.Cut(name, "."); ok && first == "limits" {
				lim = append(lim, entry)
			} else {
				req = append(req, entry)
			}
		}
		return strings.Join(req, ", "), strings.Join(lim, ", ")
	}
	return columns(
		nameColumn(),
		ageColumn(),
		col("Request", "string", "Used and hard amounts of the quota's request resources.", func(o registry.Object, _ time.Time) any {
			r, _ := split(o)
			return r
		}),
		col("Limit", "string", "Used and hard amounts of the quota's limit resources.", func(o registry.Object, _ time.Time) any {
			_, l := split(o)
			return l
		}),
	)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// componentStatusTable reports the component's Healthy condition (the
// first one): "Healthy", "Unhealthy", or "Unknown" without one.
func componentStatusTable() *registry.Table {
	healthy := func(o registry.Object) map[string]any {
		for _, c := range list(o, "conditions") {
			if str(c, "type") == "Healthy" {
				m, _ := c.(map[string]any)
				return m
			}
		}
		return nil
	}
	return columns(
		nameColumn(),
		col("Status", "string", "Health of the component.", func(o registry.Object, _ time.Time) any {
			c := healthy(o)
			switch {
			case c == nil:
				return "Unknown"
			case str(c, "status") == "True":
				return "Healthy"
			}
			return "Unhealthy"
		}),
		col("Message", "string", "Message of the health condition.", func(o registry.Object, _ time.Time) any {
			return str(healthy(o), "message")
		}),
		col("Error", "string", "Error of the health condition.", func(o registry.Object, _ time.Time) any {
			return str(healthy(o), "error")
		}),
	)
}
