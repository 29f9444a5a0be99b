package builtin

// dropDisabledPodSpecFields removes the fields of features that are off by
// default in v1.32 (alpha, or beta but disabled), as upstream drops them
// silently on write. A field the stored object already uses is kept, so
// an update never loses data; old is nil on create.
//
// The features: pod-level resources, in-place resize (container
// resizePolicy), dynamic resource allocation (resourceClaims and container
// resource claims), user namespaces (hostUsers), supplemental groups
// policy, SELinux change policy, image volumes and cluster trust bundle
// projections.
func dropDisabledPodSpecFields(spec, old map[string]any) {
	if spec == nil {
		return
	}
	dropUnlessUsed(spec, old, "resources")
	dropUnlessUsed(spec, old, "hostUsers")
	if !anyContainerUses(old, "resizePolicy") {
		forEachContainer(spec, func(c map[string]any) { delete(c, "resizePolicy") })
	}
	if !has(old, "resourceClaims") && !anyContainerClaims(old) {
		delete(spec, "resourceClaims")
		forEachContainer(spec, func(c map[string]any) {
			if r := mapOf(c["resources"]); r != nil {
				delete(r, "claims")
			}
		})
	}
	sc, oldSC := mapOf(spec["securityContext"]), mapOf(old["securityContext"])
	if sc != nil {
		dropUnlessUsed(sc, oldSC, "supplementalGroupsPolicy")
		dropUnlessUsed(sc, oldSC, "seLinuxChangePolicy")
	}
	if !anyVolumeUses(old, "image") {
		for _, v := range mapsOf(spec["volumes"]) {
			delete(v, "image")
		}
	}
	if !anyProjectionUses(old, "clusterTrustBundle") {
		for _, v := range mapsOf(spec["volumes"]) {
			for _, src := range mapsOf(mapOf(v["projected"])["sources"]) {
				delete(src, "clusterTrustBundle")
			}
		}
	}
}

func dropUnlessUsed(m, old map[string]any, key string) {
	if !has(old, key) {
		delete(m, key)
	}
}

// forEachContainer calls fn for every container of every kind.
func forEachContainer(spec map[string]any, fn func(c map[string]any)) {
	for _, kind := range containerKinds {
		for _, c := range mapsOf(spec[kind]) {
			fn(c)
		}
	}
}

func anyContainerUses(spec map[string]any, key string) bool {
	used := false
	forEachContainer(spec, func(c map[string]any) { used = used || len(listOf(c[key])) > 0 })
	return used
}

func anyContainerClaims(spec map[string]any) bool {
	used := false
	forEachContainer(spec, func(c map[string]any) {
		used = used || len(listOf(mapOf(c["resources"])["claims"])) > 0
	})
	return used
}

func anyVolumeUses(spec map[string]any, source string) bool {
	for _, v := range mapsOf(spec["volumes"]) {
		if has(v, source) {
			return true
		}
	}
	return false
}

func anyProjectionUses(spec map[string]any, source string) bool {
	for _, v := range mapsOf(spec["volumes"]) {
		for _, src := range mapsOf(mapOf(v["projected"])["sources"]) {
			if has(src, source) {
				return true
			}
		}
	}
	return false
}
