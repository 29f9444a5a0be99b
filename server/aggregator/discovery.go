package aggregator

import (
	"time"

	"platd/server/discovery"
	"platd/server/registry"
)

// discoveryRefresh is how old the resources read of an Available
// APIService may be before discovery reads them again, upstream's refresh
// period. The availability checks read them more often where they run;
// this keeps a server that runs no controllers (a replica that does not
// lead) current too.
const discoveryRefresh = time.Minute

// discoveryRetry is how long a failed background read waits before the
// next: discovery requests come often, a server that does not answer
// must not be asked by each.
const discoveryRetry = 10 * time.Second

// resourceList is what the last successful discovery check of an
// APIService read.
type resourceList struct {
	group, version string
	// resources is nil when the body was not a resource list.
	resources *discovery.RemoteResources
	read      time.Time
}

// keepList keeps the resources a check of the APIService called name
// read, for RemoteGroupVersions.
func (a *Aggregator) keepList(name, group, version string, res *discovery.RemoteResources) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if old, ok := a.lists[name]; ok && old.group == group && old.version == version && old.resources.Equal(res) {
		old.read = time.Now()
		a.lists[name] = old
		return
	}
	a.lists[name] = resourceList{group: group, version: version, resources: res, read: time.Now()}
	a.gen++
}

// readLater reads, in the background, the resources of the Available
// APIService called name with spec when none were read in the last
// discoveryRefresh and no read is under way. The caller holds a.mu.
func (a *Aggregator) readLater(name string, spec map[string]any) {
	if l, ok := a.lists[name]; a.closed || a.reading[name] || ok && time.Since(l.read) < discoveryRefresh || time.Since(a.tried[name]) < discoveryRetry {
		return
	}
	a.reading[name] = true
	a.tried[name] = time.Now()
	a.reads.Add(1)
	go func() {
		defer a.reads.Done()
		defer func() {
			a.mu.Lock()
			delete(a.reading, name)
			a.mu.Unlock()
		}()
		if err := a.CheckDiscovery(a.ctx, name, spec); err != nil {
			a.cfg.Log.Debug("aggregator: reading discovery", "apiservice", name, "err", err)
		}
	}()
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
		if Available(as) {
			if l, ok := a.lists[name]; ok && l.group == group && l.version == version {
				rgv.Resources = l.resources
			}
			a.readLater(name, spec)
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
