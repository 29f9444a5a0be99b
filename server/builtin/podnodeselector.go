package builtin

import (
	"context"
	"fmt"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/validation"
)

// podNodeSelector keeps new pods to the nodes their namespace allows, as
// upstream's PodNodeSelector admission plugin: the namespace's node
// selector (its annotation, else the configured cluster default) joins
// the pod's, which may not contradict it, and the result must keep to the
// whitelist configured for the namespace. Only creates are admitted.
type podNodeSelector struct {
	pods, namespaces *registry.Descriptor
	// annotation is the namespace annotation holding its node selector.
	annotation string
	config     config.PodNodeSelectorConfiguration
}

// Upstream's refusals of a pod whose node selector does not fit its
// namespace.
const (
	nodeSelectorConflictMsg  = "pod node label selector conflicts with its namespace node label selector"
	nodeSelectorWhitelistMsg = "pod node label selector labels conflict with its namespace whitelist"
)

func newPodNodeSelector(b config.Brand, pods, namespaces *registry.Descriptor, c config.PodNodeSelectorConfiguration) podNodeSelector {
	return podNodeSelector{pods: pods, namespaces: namespaces, annotation: "scheduler.alpha." + b.Label("node-selector"), config: c}
}

// admitPod merges the namespace's node selector into a new pod's, then
// checks the pod as validatePod does.
func (p podNodeSelector) admitPod(ctx context.Context, l registry.Lookup, obj, old registry.Object) error {
	if old != nil {
		return nil
	}
	nsSelector, err := p.namespaceSelector(l, str(obj, "metadata", "namespace"))
	if err != nil {
		return err
	}
	spec := child(obj, "spec")
	podSelector := mapOf(spec["nodeSelector"])
	if selectorsConflict(nsSelector, podSelector) {
		return p.forbidden(obj, nodeSelectorConflictMsg)
	}
	merged := make(map[string]any, len(nsSelector)+len(podSelector))
	for k, v := range nsSelector {
		merged[k] = v
	}
	for k, v := range podSelector {
		merged[k] = v
	}
	if len(merged) > 0 {
		spec["nodeSelector"] = merged
	}
	return p.validatePod(ctx, l, obj, old)
}

// validatePod checks that a new pod's node selector does not contradict
// its namespace's and keeps to the namespace's whitelist: each of its
// labels must be one of the whitelist's, when there is one.
func (p podNodeSelector) validatePod(_ context.Context, l registry.Lookup, obj, old registry.Object) error {
	if old != nil {
		return nil
	}
	ns := str(obj, "metadata", "namespace")
	nsSelector, err := p.namespaceSelector(l, ns)
	if err != nil {
		return err
	}
	podSelector := mapOf(mapOf(obj["spec"])["nodeSelector"])
	if selectorsConflict(nsSelector, podSelector) {
		return p.forbidden(obj, nodeSelectorConflictMsg)
	}
	whitelist, err := selectorLabels(p.config.Whitelist(ns))
	if err != nil {
		return err
	}
	if len(whitelist) == 0 {
		return nil
	}
	for k, v := range podSelector {
		if w, ok := whitelist[k]; !ok || w != strOf(v) {
			return p.forbidden(obj, nodeSelectorWhitelistMsg)
		}
	}
	return nil
}

// namespaceSelector is the node selector of the namespace called name:
// its annotation's, even empty, else the cluster default. A namespace
// that cannot be read is an internal error, as upstream answers it.
func (p podNodeSelector) namespaceSelector(l registry.Lookup, name string) (map[string]string, error) {
	ns, err := l.Get(p.namespaces, "", name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil, apierr.InternalError(fmt.Errorf("namespace %s does not exist", name))
	}
	if err != nil {
		return nil, apierr.InternalError(err)
	}
	if v, ok := mapOf(mapOf(ns["metadata"])["annotations"])[p.annotation]; ok {
		return selectorLabels(strOf(v))
	}
	return selectorLabels(p.config.ClusterDefault())
}

// forbidden is upstream's 403 refusal of the pod, named as it is named
// when refused: without a name while it has only a generateName, its
// name being generated after the mutating admission.
func (p podNodeSelector) forbidden(obj registry.Object, reason string) error {
	name := str(obj, "metadata", "name")
	return apierr.NewForbidden(p.pods.Group, p.pods.Resource, name,
		fmt.Sprintf("%s %q is forbidden: %s", p.pods.GroupResource(), name, reason))
}

// selectorsConflict reports whether a label is in both selectors with
// different values.
func selectorsConflict(ns map[string]string, pod map[string]any) bool {
	for k, v := range pod {
		if w, ok := ns[k]; ok && w != strOf(v) {
			return true
		}
	}
	return false
}

// selectorLabels reads a node selector of key=value pairs separated by
// commas (spaces around keys and values trimmed) with upstream's checks
// and messages; "" is the empty selector.
func selectorLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	if s == "" {
		return out, nil
	}
	for _, pair := range strings.Split(s, ",") {
		kv := strings.Split(pair, "=")
		if len(kv) != 2 {
			return nil, fmt.Errorf("invalid selector: %s", kv)
		}
		k, v := strings.TrimSpace(kv[0]), strings.TrimSpace(kv[1])
		// Upstream's field errors here have no path: the key's prints as
		// a nil path, the value's as the key's subscript.
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			return nil, apierr.Invalid("<nil>", k, strings.Join(msgs, "; "))
		}
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			return nil, apierr.Invalid("["+k+"]", v, strings.Join(msgs, "; "))
		}
		out[k] = v
	}
	return out, nil
}
