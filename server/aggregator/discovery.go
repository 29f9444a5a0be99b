package aggregator

import (
	"platd/server/discovery"
	"platd/server/registry"
)

// resourceList is what the last successful discovery check of an
// APIService read.
type resourceList struct {
	group, version string
	// resources is nil when the body was not a resource list.
	resources *discovery.RemoteResources
}

// keepList keeps the resources a check of the APIService called name
// read, for RemoteGroupVersions.
func (a *Aggregator) keepList(name, group, version string, res *discovery.RemoteResources) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if old, ok := a.lists[name]; ok && old.group == group && old.version == version && old.resources.Equal(res) {
		return
	}
	a.lists[name] = resourceList{group: group, version: version, resources: res}
	a.gen++
}

// RemoteGroupVersions lists the group-versions of the APIServices that
// name a service, with their priorities and, for an Available one, the
// resources its last discovery check read. A read error lists none.
func (a *Aggregator) RemoteGroupVersions() []discovery.RemoteGroupVersion {
	if a.cfg.APIServices == nil {
		return nil
	}
	items, _, err := a.cfg.Objects.List(a.cfg.APIServices, "")
	if err != nil {
		return nil
	}
	var out []discovery.RemoteGroupVersion
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, as := range items {
		spec, _ := as["spec"].(map[string]any)
		if _, remote := spec["service"].(map[string]any); !remote {
			continue
		}
		meta, _ := as["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		group, _ := spec["group"].(string)
		version, _ := spec["version"].(string)
		gp, _ := spec["groupPriorityMinimum"].(int64)
		vp, _ := spec["versionPriority"].(int64)
		rgv := discovery.RemoteGroupVersion{Group: group, Version: version, Priority: registry.Priority{Group: int(gp), Version: int(vp)}}
		if l, ok := a.lists[name]; ok && Available(as) && l.group == group && l.version == version {
			rgv.Resources = l.resources
		}
		out = append(out, rgv)
	}
	return out
}

// OpenAPIKeys lists the OpenAPI v3 index keys ("apis/<group>/<version>")
// of the Available APIServices that name a service: their documents are
// the extension servers' own.
func (a *Aggregator) OpenAPIKeys() []string {
	if a.cfg.APIServices == nil {
		return nil
	}
	items, _, err := a.cfg.Objects.List(a.cfg.APIServices, "")
	if err != nil {
		return nil
	}
	var out []string
	for _, as := range items {
		spec, _ := as["spec"].(map[string]any)
		if _, remote := spec["service"].(map[string]any); !remote || !Available(as) {
			continue
		}
		group, _ := spec["group"].(string)
		version, _ := spec["version"].(string)
		if group != "" && version != "" {
			out = append(out, "apis/"+group+"/"+version)
		}
	}
	return out
}
