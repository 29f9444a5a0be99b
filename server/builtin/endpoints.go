package builtin

import (
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/validation"
)

// endpoints: the legacy list of a service's addresses.
func endpoints() *registry.Descriptor {
	d := core("endpoints", "endpoints", "Endpoints", true, "ep")
	d.UpdateCreates = true
	d.Strategy.Default = func(obj registry.Object) {
		for _, ss := range mapsOf(obj["subsets"]) {
			for _, p := range mapsOf(ss["ports"]) {
				if str(p, "protocol") == "" {
					p["protocol"] = protocolTCP
				}
			}
		}
	}
	d.Strategy.Validate = validateEndpointsObject
	return d
}

// validateEndpointsObject checks the subsets: each has an address, every
// address is a usable IP, ports are named when there are several.
func validateEndpointsObject(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for i, ss := range mapsOf(obj["subsets"]) {
		path := pathOf(index("subsets", i))
		addrs, notReady := mapsOf(ss["addresses"]), mapsOf(ss["notReadyAddresses"])
		if len(addrs) == 0 && len(notReady) == 0 {
			errs = append(errs, apierr.Required(path.String(), "must specify `addresses` or `notReadyAddresses`"))
		}
		for j, a := range addrs {
			errs = append(errs, validateEndpointAddress(a, path.child("addresses").index(j))...)
		}
		for j, a := range notReady {
			errs = append(errs, validateEndpointAddress(a, path.child("notReadyAddresses").index(j))...)
		}
		ports := mapsOf(ss["ports"])
		for j, p := range ports {
			errs = append(errs, validateEndpointPort(p, len(ports) > 1, path.child("ports").index(j))...)
		}
	}
	return errs
}

func validateEndpointAddress(a map[string]any, path fieldPath) apierr.FieldErrors {
	ip := str(a, "ip")
	errs := validateIP(ip, path.child("ip"))
	if h := str(a, "hostname"); h != "" {
		errs = append(errs, dnsLabel(h, path.child("hostname"))...)
	}
	if present(a, "nodeName") {
		node := str(a, "nodeName")
		for _, msg := range validation.IsDNS1123Subdomain(node) {
			errs = append(errs, apierr.Invalid(path.child("nodeName").String(), node, msg))
		}
	}
	return append(errs, validateEndpointIP(path.child("ip").String(), ip)...)
}

func validateEndpointPort(p map[string]any, requireName bool, path fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	switch name := str(p, "name"); {
	case requireName && name == "":
		errs = append(errs, apierr.Required(path.child("name").String(), ""))
	case name != "":
		errs = append(errs, dnsLabel(name, path.child("name"))...)
	}
	errs = append(errs, portAndProtocol(p, path)...)
	if present(p, "appProtocol") {
		errs = append(errs, qualifiedName(str(p, "appProtocol"), path.child("appProtocol"))...)
	}
	return errs
}
