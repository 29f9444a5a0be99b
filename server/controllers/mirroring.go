package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"platd/bolt"
	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/validation"
)

// mirroringRetryDelay is how long a failed mirroring waits before the
// next attempt.
const mirroringRetryDelay = time.Second

// maxMirroredPerSubset bounds the addresses of one Endpoints subset that
// are mirrored, upstream's default --mirroring-max-endpoints-per-subset.
const maxMirroredPerSubset = 1000

// EndpointSliceMirroring mirrors the Endpoints of services without a
// selector, which their users write by hand, to EndpointSlices, as
// upstream's controller manager does, so that readers of slices see
// them: one slice per address family and set of ports, holding the
// subsets' ready and not-ready addresses (a thousand a subset at most;
// addresses that are not IPs are left out), with the Endpoints' labels
// and annotations, the service-name and managed-by labels, and the
// Endpoints as controlling owner. Endpoints marked skip-mirror, or
// holding a leader election record, are not mirrored; the slices of
// Endpoints that stop qualifying (deleted, marked, their service gone or
// given a selector) are deleted.
type EndpointSliceMirroring struct {
	Source                      Source
	Objects                     Objects
	Endpoints, Services, Slices *registry.Descriptor
	Brand                       config.Brand
	Log                         *slog.Logger

	queue *queue
}

// mirroredBy is the managed-by value of the slices mirrored here.
func (c *EndpointSliceMirroring) mirroredBy() string {
	return "endpointslicemirroring-controller." + c.Brand.Domain
}

func (c *EndpointSliceMirroring) managedByLabel() string {
	return "endpointslice." + c.Brand.LongDomain + "/managed-by"
}

func (c *EndpointSliceMirroring) serviceNameLabel() string { return c.Brand.Label("service-name") }

// Run works until ctx ends and returns once its goroutines have stopped.
func (c *EndpointSliceMirroring) Run(ctx context.Context) {
	c.queue = newQueue()
	c.queue.workWhile(ctx, c.Log, mirroringRetryDelay, c.sync, func() {
		var wg sync.WaitGroup
		for _, f := range []struct {
			d     *registry.Descriptor
			event func(bolt.Event)
		}{{c.Services, c.namesakeChanged}, {c.Slices, c.sliceChanged}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				followChanges(ctx, c.Source, f.d.Prefix(""), c.Log, c.restarted, f.event)
			}()
		}
		follow(ctx, c.Source, c.Endpoints.Prefix(""), c.Log, asPuts(c.namesakeChanged), c.namesakeChanged)
		wg.Wait()
	})
}

// restarted queues every Endpoints when a watch of services or slices
// started over: it may have missed changes.
func (c *EndpointSliceMirroring) restarted(first bool) {
	if first {
		return
	}
	eps, _, err := c.Objects.List(c.Endpoints, "")
	if err != nil {
		c.Log.Warn("endpoint slice mirroring: listing Endpoints", "err", err)
		return
	}
	for _, ep := range eps {
		c.queue.add(metaString(ep, "namespace") + "/" + metaString(ep, "name"))
	}
}

// mirroredMeta is the part of an object's metadata read here.
type mirroredMeta struct {
	Metadata struct {
		Namespace string            `json:"namespace"`
		Name      string            `json:"name"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
}

func (c *EndpointSliceMirroring) decode(ev bolt.Event) (mirroredMeta, bool) {
	kv := ev.KV
	if ev.Type != bolt.Put && ev.Prev != nil {
		kv = *ev.Prev
	}
	var m mirroredMeta
	if err := json.Unmarshal(kv.Value, &m); err != nil {
		c.Log.Warn("endpoint slice mirroring: unreadable object", "key", kv.Key, "err", err)
		return m, false
	}
	return m, true
}

// namesakeChanged queues the Endpoints named as the Endpoints or service
// of ev: a service's selector decides whether its Endpoints are
// mirrored.
func (c *EndpointSliceMirroring) namesakeChanged(ev bolt.Event) {
	if m, ok := c.decode(ev); ok {
		c.queue.add(m.Metadata.Namespace + "/" + m.Metadata.Name)
	}
}

// sliceChanged queues the Endpoints of a slice mirrored here, so that a
// slice changed or deleted by someone else is mirrored again.
func (c *EndpointSliceMirroring) sliceChanged(ev bolt.Event) {
	m, ok := c.decode(ev)
	if !ok || m.Metadata.Labels[c.managedByLabel()] != c.mirroredBy() {
		return
	}
	if svc := m.Metadata.Labels[c.serviceNameLabel()]; svc != "" {
		c.queue.add(m.Metadata.Namespace + "/" + svc)
	}
}

// sync mirrors the Endpoints called key ("namespace/name"), or deletes
// their slices when they are not to be mirrored.
func (c *EndpointSliceMirroring) sync(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	existing, err := c.mirrored(ns, name)
	if err != nil {
		return err
	}
	ep, err := c.Objects.Get(c.Endpoints, ns, name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return c.deleteAll(ctx, ns, existing)
	}
	if err != nil {
		return err
	}
	labels, _ := child(ep, "metadata")["labels"].(map[string]any)
	annotations, _ := child(ep, "metadata")["annotations"].(map[string]any)
	// Endpoints used as a leader election lock are no service's.
	_, leader := annotations["control-plane.alpha."+c.Brand.LongDomain+"/leader"]
	if labels["endpointslice."+c.Brand.LongDomain+"/skip-mirror"] == "true" || leader {
		return c.deleteAll(ctx, ns, existing)
	}
	svc, err := c.Objects.Get(c.Services, ns, name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return c.deleteAll(ctx, ns, existing)
	}
	if err != nil {
		return err
	}
	if sel, has := child(svc, "spec")["selector"]; has && sel != nil {
		return c.deleteAll(ctx, ns, existing)
	}
	return c.reconcile(ctx, ep, existing)
}

// mirrored lists the slices mirrored for the Endpoints ns/name.
func (c *EndpointSliceMirroring) mirrored(ns, name string) ([]registry.Object, error) {
	all, _, err := c.Objects.List(c.Slices, ns)
	if err != nil {
		return nil, err
	}
	var out []registry.Object
	for _, s := range all {
		l, _ := child(s, "metadata")["labels"].(map[string]any)
		if l[c.serviceNameLabel()] == name && l[c.managedByLabel()] == c.mirroredBy() {
			out = append(out, s)
		}
	}
	return out, nil
}

func (c *EndpointSliceMirroring) deleteAll(ctx context.Context, ns string, slices []registry.Object) error {
	for _, s := range slices {
		if _, err := c.Objects.Delete(ctx, c.Slices, ns, metaString(s, "name"), registry.DeleteOptions{}); err != nil && apierr.ReasonOf(err) != apierr.ReasonNotFound {
			return fmt.Errorf("deleting the mirrored EndpointSlice %s/%s: %w", ns, metaString(s, "name"), err)
		}
	}
	return nil
}

// sliceGroup is the content of one wanted slice: an address family and
// its ports, with the endpoints in the order first seen.
type sliceGroup struct {
	addressType string
	ports       []any
	endpoints   []any
	seen        map[string]bool
}

// groupKey identifies a group by family and ports.
func groupKey(addressType string, ports []any) string {
	b, _ := json.Marshal(ports)
	return addressType + "/" + string(b)
}

// wanted computes the slices the Endpoints ep call for, by group key, in
// the order first seen.
func wanted(ep registry.Object) (map[string]*sliceGroup, []string) {
	groups := map[string]*sliceGroup{}
	var order []string
	for _, sub := range list(ep["subsets"]) {
		s, _ := sub.(map[string]any)
		ports := normPorts(s["ports"])
		added := 0
		add := func(addr any, ready bool) {
			a, _ := addr.(map[string]any)
			ip := net.ParseIP(stringOr(a["ip"]))
			if ip == nil || added >= maxMirroredPerSubset {
				return
			}
			added++
			family := "IPv4"
			if ip.To4() == nil {
				family = "IPv6"
			}
			e := map[string]any{"addresses": []any{ip.String()}, "conditions": map[string]any{"ready": ready}}
			if ref, ok := a["targetRef"]; ok && ref != nil {
				e["targetRef"] = ref
			}
			if n, ok := a["nodeName"].(string); ok {
				e["nodeName"] = n
			}
			if h, _ := a["hostname"].(string); h != "" {
				e["hostname"] = h
			}
			k := groupKey(family, ports)
			g := groups[k]
			if g == nil {
				g = &sliceGroup{addressType: family, ports: ports, seen: map[string]bool{}}
				groups[k] = g
				order = append(order, k)
			}
			id, _ := json.Marshal(e)
			if !g.seen[string(id)] {
				g.seen[string(id)] = true
				g.endpoints = append(g.endpoints, e)
			}
		}
		for _, a := range list(s["addresses"]) {
			add(a, true)
		}
		for _, a := range list(s["notReadyAddresses"]) {
			add(a, false)
		}
	}
	return groups, order
}

func stringOr(v any) string { s, _ := v.(string); return s }

// sliceContent is a slice's content as mirroring compares it.
func (c *EndpointSliceMirroring) sliceContent(ep registry.Object, g *sliceGroup) registry.Object {
	md := child(ep, "metadata")
	labels := map[string]any{}
	if l, ok := md["labels"].(map[string]any); ok {
		for k, v := range l {
			labels[k] = v
		}
	}
	labels[c.serviceNameLabel()] = metaString(ep, "name")
	labels[c.managedByLabel()] = c.mirroredBy()
	annotations := map[string]any{}
	if a, ok := md["annotations"].(map[string]any); ok {
		for k, v := range a {
			if k == "endpoints."+c.Brand.LongDomain+"/last-change-trigger-time" || k == c.Brand.LastAppliedAnnotation() {
				continue
			}
			annotations[k] = v
		}
	}
	meta := map[string]any{"labels": labels, "ownerReferences": []any{map[string]any{
		"apiVersion": "v1", "kind": "Endpoints", "name": metaString(ep, "name"), "uid": metaString(ep, "uid"),
		"controller": true, "blockOwnerDeletion": true,
	}}}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	endpoints := g.endpoints
	if endpoints == nil {
		endpoints = []any{}
	}
	return registry.Object{"metadata": meta, "addressType": g.addressType, "ports": g.ports, "endpoints": endpoints}
}

// sameContent reports whether the stored slice s holds want.
func sameContent(s, want registry.Object) bool {
	md := child(s, "metadata")
	wmd := want["metadata"].(map[string]any)
	norm := func(v any) any {
		b, _ := json.Marshal(v)
		var out any
		_ = json.Unmarshal(b, &out)
		return out
	}
	annotations := md["annotations"]
	if annotations == nil {
		annotations = map[string]any{}
	}
	wantAnnotations := wmd["annotations"]
	if wantAnnotations == nil {
		wantAnnotations = map[string]any{}
	}
	return s["addressType"] == want["addressType"] &&
		reflect.DeepEqual(norm(s["ports"]), norm(want["ports"])) &&
		reflect.DeepEqual(norm(s["endpoints"]), norm(want["endpoints"])) &&
		reflect.DeepEqual(norm(md["labels"]), norm(wmd["labels"])) &&
		reflect.DeepEqual(norm(annotations), norm(wantAnnotations)) &&
		reflect.DeepEqual(norm(md["ownerReferences"]), norm(wmd["ownerReferences"]))
}

// reconcile brings the mirrored slices of ep to what it calls for: a
// group's first slice is kept (and updated when it differs), the others
// deleted; a group without a slice takes over one to be deleted, else
// gets a new one.
func (c *EndpointSliceMirroring) reconcile(ctx context.Context, ep registry.Object, existing []registry.Object) error {
	ns, name := metaString(ep, "namespace"), metaString(ep, "name")
	groups, order := wanted(ep)
	byKey := map[string][]registry.Object{}
	for _, s := range existing {
		k := groupKey(stringOr(s["addressType"]), normPorts(s["ports"]))
		byKey[k] = append(byKey[k], s)
	}
	var spare []registry.Object
	var missing []string
	type update struct {
		name string
		want registry.Object
	}
	var updates []update
	for k, group := range byKey {
		if groups[k] == nil {
			spare = append(spare, group...)
			continue
		}
		spare = append(spare, group[1:]...)
		if want := c.sliceContent(ep, groups[k]); !sameContent(group[0], want) {
			updates = append(updates, update{metaString(group[0], "name"), want})
		}
	}
	for _, k := range order {
		if byKey[k] == nil {
			missing = append(missing, k)
		}
	}
	for _, k := range missing {
		want := c.sliceContent(ep, groups[k])
		// A slice's address type is immutable: only a spare one of the
		// same family is taken over.
		if i := slices.IndexFunc(spare, func(s registry.Object) bool { return s["addressType"] == want["addressType"] }); i >= 0 {
			updates = append(updates, update{metaString(spare[i], "name"), want})
			spare = slices.Delete(spare, i, i+1)
			continue
		}
		if metaString(ep, "deletionTimestamp") != "" {
			continue
		}
		md := want["metadata"].(map[string]any)
		md["generateName"] = slicePrefix(name)
		md["namespace"] = ns
		if err := c.Objects.CreateOnly(ctx, c.Slices, want); err != nil {
			if apierr.ReasonOf(err) == apierr.ReasonForbidden && strings.Contains(err.Error(), "being terminated") {
				return nil
			}
			return fmt.Errorf("failed to create EndpointSlice for Endpoints %s/%s: %w", ns, name, err)
		}
	}
	for _, u := range updates {
		_, err := c.Objects.Update(ctx, c.Slices, ns, u.name, "", func(cur registry.Object) registry.Object {
			if sameContent(cur, u.want) {
				return nil
			}
			md := child(cur, "metadata")
			wmd := u.want["metadata"].(map[string]any)
			md["labels"], md["ownerReferences"] = wmd["labels"], wmd["ownerReferences"]
			if a, ok := wmd["annotations"]; ok {
				md["annotations"] = a
			} else {
				delete(md, "annotations")
			}
			cur["addressType"], cur["ports"], cur["endpoints"] = u.want["addressType"], u.want["ports"], u.want["endpoints"]
			return cur
		})
		if err != nil && apierr.ReasonOf(err) != apierr.ReasonNotFound {
			return fmt.Errorf("failed to update %s EndpointSlice for Endpoints %s/%s: %w", u.name, ns, name, err)
		}
	}
	return c.deleteAll(ctx, ns, spare)
}

// normPorts is ports (an Endpoints subset's or a slice's) in the form of
// a mirrored slice's, which is also the form they are compared in.
func normPorts(v any) []any {
	out := []any{}
	for _, p := range list(v) {
		pm, _ := p.(map[string]any)
		port := map[string]any{"name": stringOr(pm["name"]), "port": pm["port"], "protocol": stringOr(pm["protocol"])}
		if ap, ok := pm["appProtocol"]; ok && ap != nil {
			port["appProtocol"] = ap
		}
		out = append(out, port)
	}
	return out
}

// slicePrefix is the generateName of a mirrored slice: the Endpoints'
// name and a dash, or the name alone when that is not a valid prefix.
func slicePrefix(name string) string {
	// The prefix is checked as a generate name is: its trailing dash
	// as a letter.
	if len(validation.IsDNS1123Subdomain(name+"a")) == 0 {
		return name + "-"
	}
	return name
}
