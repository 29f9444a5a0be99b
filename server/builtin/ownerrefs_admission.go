package builtin

import (
	"context"
	"fmt"
	"strings"

	"platd/security"
	"platd/server/admission"
	"platd/server/registry"
)

// OwnerReferencesPermissionEnforcement is upstream's admission plugin of
// that name: a client may change an object's ownerReferences only if it
// may delete the object (a create needs no such right: not creating it
// was in its power), and may newly set blockOwnerDeletion on a reference
// only if it may update the owner's finalizers, since blocking the
// owner's deletion is a power over the owner. Writes of a pod's status
// are exempt, as upstream exempts them.
type OwnerReferencesPermissionEnforcement struct {
	authz security.Authorizer
	// byKind is the served resource of a kind in a version, nil for none.
	byKind func(group, version, kind string) *registry.Descriptor
}

// NewOwnerReferencesPermissionEnforcement returns the plugin, deciding
// with authz and finding owners' resources with byKind.
func NewOwnerReferencesPermissionEnforcement(authz security.Authorizer, byKind func(group, version, kind string) *registry.Descriptor) *OwnerReferencesPermissionEnforcement {
	return &OwnerReferencesPermissionEnforcement{authz: authz, byKind: byKind}
}

// Empty is false: the plugin looks at every create and update.
func (p *OwnerReferencesPermissionEnforcement) Empty() bool { return false }

// Validate refuses a change of ownerReferences the writer may not make.
func (p *OwnerReferencesPermissionEnforcement) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.User == nil || (a.Operation != admission.OpCreate && a.Operation != admission.OpUpdate) ||
		(a.Descriptor.Group == "" && a.Descriptor.Resource == "pods" && a.Subresource == "status") {
		return nil
	}
	refs := mapsOf(mapOf(a.Object["metadata"])["ownerReferences"])
	var old []map[string]any
	if a.OldObject != nil {
		old = mapsOf(mapOf(a.OldObject["metadata"])["ownerReferences"])
	}
	if !changedOwners(refs, old, a.OldObject == nil) {
		return nil
	}
	if a.Operation != admission.OpCreate {
		d := a.Descriptor
		decision, reason, err := p.authz.Authorize(ctx, security.Attributes{User: a.User, Verb: "delete", Namespace: a.Namespace,
			APIGroup: d.Group, APIVersion: d.Version, Resource: d.Resource, Subresource: a.Subresource, Name: a.Name, ResourceRequest: true})
		if decision != security.DecisionAllow {
			return forbidWrite(a, "cannot set an ownerRef on a resource you can't delete: %s, %v", reason, err)
		}
	}
	for _, ref := range newlyBlocking(refs, old) {
		apiVersion, kind := strOf(ref["apiVersion"]), strOf(ref["kind"])
		group, version, ok := strings.Cut(apiVersion, "/")
		if !ok {
			group, version = "", apiVersion
		}
		var owner *registry.Descriptor
		problem := fmt.Sprintf("unexpected GroupVersion string: %s", apiVersion)
		if !strings.Contains(version, "/") {
			if owner = p.byKind(group, version, kind); owner == nil {
				problem = noKindMatch(group, version, kind)
			}
		}
		if owner == nil {
			return forbidWrite(a, "cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion %s Kind %s: %s", apiVersion, kind, problem)
		}
		rec := security.Attributes{User: a.User, Verb: "update", APIGroup: owner.Group, APIVersion: owner.Version, Resource: owner.Resource,
			Subresource: "finalizers", Name: strOf(ref["name"]), ResourceRequest: true}
		if owner.Namespaced {
			// A namespaced owner is in the dependent's namespace.
			rec.Namespace = a.Namespace
		}
		decision, reason, err := p.authz.Authorize(ctx, rec)
		if decision != security.DecisionAllow {
			return forbidWrite(a, "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: %s, %v", reason, err)
		}
	}
	return nil
}

// changedOwners reports whether a write changes an object's owner
// references: any at all on a create, any difference in order or
// content on an update.
func changedOwners(refs, old []map[string]any, create bool) bool {
	if create {
		return len(refs) > 0
	}
	if len(refs) != len(old) {
		return true
	}
	for i := range refs {
		if !semanticEqual(refs[i], old[i]) {
			return true
		}
	}
	return false
}

// newlyBlocking are the references of refs that block their owner's
// deletion and did not among old (by owner uid).
func newlyBlocking(refs, old []map[string]any) []map[string]any {
	blocked := map[string]bool{}
	for _, r := range old {
		blocked[strOf(r["uid"])] = boolOf(r["blockOwnerDeletion"])
	}
	var out []map[string]any
	for _, r := range refs {
		if boolOf(r["blockOwnerDeletion"]) && !blocked[strOf(r["uid"])] {
			out = append(out, r)
		}
	}
	return out
}

// noKindMatch is upstream's error for a kind no resource serves.
func noKindMatch(group, version, kind string) string {
	gv := version
	if group != "" {
		gv = group + "/" + version
	}
	return fmt.Sprintf("no matches for kind %q in version %q", kind, gv)
}
