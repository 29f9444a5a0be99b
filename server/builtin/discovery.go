package builtin

import (
	"reflect"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/validation"
)

func discoveryV1(b config.Brand) []*registry.Descriptor {
	return []*registry.Descriptor{endpointSlices(b.Group("discovery"))}
}

// Limits of an EndpointSlice, as upstream: a slice is meant to stay a
// small object that many watchers receive on every change.
const (
	endpointSliceEndpointsMax = 1000
	endpointAddressesMax      = 100
	endpointSlicePortsMax     = 20000
	endpointTopologyMax       = 16
	endpointZoneHintsMax      = 8
)

// Address types of an EndpointSlice.
const (
	addressTypeIPv4 = "IPv4"
	addressTypeIPv6 = "IPv6"
	addressTypeFQDN = "FQDN"
)

// addressTypes and portProtocols are the accepted values, sorted.
var (
	addressTypes  = []string{addressTypeFQDN, addressTypeIPv4, addressTypeIPv6}
	portProtocols = []string{"SCTP", protocolTCP, "UDP"}
)

// endpointSlices: the generation counts changes to anything but metadata,
// and to labels (which say who manages the slice).
func endpointSlices(group string) *registry.Descriptor {
	d := groupType(group, "endpointslices", "endpointslice", "EndpointSlice", true)
	d.Strategy.Default = func(obj registry.Object) {
		for _, x := range listAt(obj, "ports") {
			port, ok := x.(map[string]any)
			if !ok {
				continue
			}
			if !present(port, "name") {
				port["name"] = ""
			}
			if !present(port, "protocol") {
				port["protocol"] = protocolTCP
			}
		}
	}
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		startGeneration(obj)
		dropDeprecatedTopology(obj)
	}
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, _ string) {
		changed := !sameLabels(mapAt(obj, "metadata", "labels"), mapAt(old, "metadata", "labels"))
		for _, f := range []string{"addressType", "endpoints", "ports"} {
			changed = changed || !sameMember(d.Schema, obj, old, f)
		}
		if changed {
			bumpGeneration(obj, old)
		}
		// Endpoints written as they were keep what they had.
		if !sameMember(d.Schema, obj, old, "endpoints") {
			dropDeprecatedTopology(obj)
		}
	}
	d.Strategy.Validate = validateEndpointSlice
	d.Strategy.ValidateUpdate = func(obj, old registry.Object) apierr.FieldErrors {
		errs := validateEndpointSlice(obj)
		if t := str(obj, "addressType"); t != str(old, "addressType") {
			errs = append(errs, apierr.Invalid("addressType", t, fieldImmutable))
		}
		return errs
	}
	return d
}

// sameLabels compares label maps, an empty map and none being the same.
func sameLabels(a, b map[string]any) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return reflect.DeepEqual(a, b)
}

// dropDeprecatedTopology removes the topology map, which v1 clients may
// not write.
func dropDeprecatedTopology(obj registry.Object) {
	for _, x := range listAt(obj, "endpoints") {
		if ep, ok := x.(map[string]any); ok {
			delete(ep, "deprecatedTopology")
		}
	}
}

func validateEndpointSlice(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	addrType := str(obj, "addressType")
	switch addrType {
	case "":
		errs = append(errs, apierr.Required("addressType", ""))
	case addressTypeIPv4, addressTypeIPv6, addressTypeFQDN:
	default:
		errs = append(errs, apierr.NotSupported("addressType", addrType, addressTypes))
	}
	errs = append(errs, validateEndpoints(listAt(obj, "endpoints"), addrType)...)
	return append(errs, validateEndpointPorts(listAt(obj, "ports"))...)
}

func validateEndpoints(endpoints []any, addrType string) apierr.FieldErrors {
	if len(endpoints) > endpointSliceEndpointsMax {
		return apierr.FieldErrors{tooMany("endpoints", len(endpoints), endpointSliceEndpointsMax)}
	}
	var errs apierr.FieldErrors
	for i, x := range endpoints {
		ep, _ := x.(map[string]any)
		path := index("endpoints", i)
		addrs := listAt(ep, "addresses")
		switch {
		case len(addrs) == 0:
			errs = append(errs, apierr.Required(path+".addresses", "must contain at least 1 address"))
		case len(addrs) > endpointAddressesMax:
			errs = append(errs, tooMany(path+".addresses", len(addrs), endpointAddressesMax))
		}
		for j, a := range addrs {
			addr, _ := a.(string)
			p := index(path+".addresses", j)
			// Addresses of an unknown type are left alone.
			switch addrType {
			case addressTypeIPv4:
				if ip := parseIPSloppy(addr); ip == nil || ip.To4() == nil {
					errs = append(errs, apierr.Invalid(p, addr, "must be a valid IPv4 address"))
				}
				errs = append(errs, validateEndpointIP(p, addr)...)
			case addressTypeIPv6:
				if ip := parseIPSloppy(addr); ip == nil || ip.To4() != nil {
					errs = append(errs, apierr.Invalid(p, addr, "must be a valid IPv6 address"))
				}
				errs = append(errs, validateEndpointIP(p, addr)...)
			case addressTypeFQDN:
				errs = append(errs, isFullyQualifiedDomainName(p, addr)...)
			}
		}
		if present(ep, "nodeName") {
			node := str(ep, "nodeName")
			for _, msg := range validation.IsDNS1123Subdomain(node) {
				errs = append(errs, apierr.Invalid(path+".nodeName", node, msg))
			}
		}
		topology := mapAt(ep, "deprecatedTopology")
		if len(topology) > endpointTopologyMax {
			errs = append(errs, tooMany(path+".deprecatedTopology", len(topology), endpointTopologyMax))
		}
		errs = append(errs, validateLabels(topology, path+".deprecatedTopology")...)
		if present(ep, "hostname") {
			host := str(ep, "hostname")
			for _, msg := range validation.IsDNS1123Label(host) {
				errs = append(errs, apierr.Invalid(path+".hostname", host, msg))
			}
		}
		if hints := mapAt(ep, "hints"); hints != nil {
			errs = append(errs, validateEndpointHints(hints, path+".hints")...)
		}
	}
	return errs
}

func validateEndpointHints(hints map[string]any, path string) apierr.FieldErrors {
	zones := listAt(hints, "forZones")
	if len(zones) > endpointZoneHintsMax {
		return apierr.FieldErrors{tooMany(path+".forZones", len(zones), endpointZoneHintsMax)}
	}
	var errs apierr.FieldErrors
	seen := map[string]bool{}
	for i, x := range zones {
		zone, _ := x.(map[string]any)
		p := index(path+".forZones", i) + ".name"
		name := str(zone, "name")
		if seen[name] {
			errs = append(errs, apierr.Duplicate(p, name))
		}
		seen[name] = true
		for _, msg := range validation.IsValidLabelValue(name) {
			errs = append(errs, apierr.Invalid(p, name, msg))
		}
	}
	return errs
}

func validateEndpointPorts(ports []any) apierr.FieldErrors {
	if len(ports) > endpointSlicePortsMax {
		return apierr.FieldErrors{tooMany("ports", len(ports), endpointSlicePortsMax)}
	}
	var errs apierr.FieldErrors
	seen := map[string]bool{}
	for i, x := range ports {
		port, _ := x.(map[string]any)
		path := index("ports", i)
		name := str(port, "name")
		if name != "" {
			for _, msg := range validation.IsDNS1123Label(name) {
				errs = append(errs, apierr.Invalid(path+".name", name, msg))
			}
		}
		if seen[name] {
			errs = append(errs, apierr.Duplicate(path+".name", name))
		}
		seen[name] = true
		switch p := str(port, "protocol"); {
		case !present(port, "protocol"):
			errs = append(errs, apierr.Required(path+".protocol", ""))
		case p != protocolTCP && p != "UDP" && p != "SCTP":
			errs = append(errs, apierr.NotSupported(path+".protocol", p, portProtocols))
		}
		if present(port, "appProtocol") {
			ap := str(port, "appProtocol")
			for _, msg := range validation.IsQualifiedName(ap) {
				errs = append(errs, apierr.Invalid(path+".appProtocol", ap, msg))
			}
		}
	}
	return errs
}
