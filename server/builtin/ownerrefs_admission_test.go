package builtin

import (
	"context"
	"testing"

	"platd/security"
	"platd/server/admission"
	"platd/server/registry"
)

// allowing is an authorizer that allows the listed "verb resource/sub
// name" requests and records every request it was asked.
type allowing struct {
	allowed map[string]bool
	asked   *[]security.Attributes
}

func (a allowing) Authorize(_ context.Context, at security.Attributes) (security.Decision, string, error) {
	*a.asked = append(*a.asked, at)
	if a.allowed[at.Verb+" "+at.Resource+"/"+at.Subresource+" "+at.Name] {
		return security.DecisionAllow, "", nil
	}
	return security.DecisionNoOpinion, "not in the test's list", nil
}

func TestOwnerReferencesPermissionEnforcement(t *testing.T) {
	t.Parallel()
	core := coreV1(brand)
	cms, pods := kindOf(core, "ConfigMap"), kindOf(core, "Pod")
	deploys := kindOf(appsV1(brand, Services{}), "Deployment")
	byKind := func(group, version, kind string) *registry.Descriptor {
		for _, d := range []*registry.Descriptor{cms, pods, deploys, kindOf(core, "Node")} {
			if d.Group == group && d.Version == version && d.Kind == kind {
				return d
			}
		}
		return nil
	}
	alice := &security.User{Name: "alice"}
	ref := func(apiVersion, kind, name, uid string, block bool) map[string]any {
		r := map[string]any{"apiVersion": apiVersion, "kind": kind, "name": name, "uid": uid}
		if block {
			r["blockOwnerDeletion"] = true
		}
		return r
	}
	obj := func(refs ...map[string]any) registry.Object {
		l := make([]any, len(refs))
		for i, r := range refs {
			l[i] = r
		}
		return registry.Object{"metadata": map[string]any{"name": "c", "ownerReferences": l}}
	}
	apps := deploys.Group + "/v1"
	for _, c := range []struct {
		name     string
		d        *registry.Descriptor
		sub, op  string
		obj, old registry.Object
		user     *security.User
		allowed  []string
		// want is the refusal, "" when admitted; asked the requests the
		// authorizer was asked, as "verb resource/sub name ns".
		want  string
		asked []string
	}{
		{name: "create without owners", d: cms, op: admission.OpCreate, obj: obj(), user: alice},
		{name: "create with an owner", d: cms, op: admission.OpCreate, obj: obj(ref(apps, "Deployment", "d", "u1", false)), user: alice},
		{name: "create blocking an owner, allowed", d: cms, op: admission.OpCreate, obj: obj(ref(apps, "Deployment", "d", "u1", true)), user: alice,
			allowed: []string{"update deployments/finalizers d"}, asked: []string{"update deployments/finalizers d ns"}},
		{name: "create blocking an owner, refused", d: cms, op: admission.OpCreate, obj: obj(ref(apps, "Deployment", "d", "u1", true)), user: alice,
			want:  `configmaps "c" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: not in the test's list, <nil>`,
			asked: []string{"update deployments/finalizers d ns"}},
		{name: "blocking a cluster-scoped owner", d: cms, op: admission.OpCreate, obj: obj(ref("v1", "Node", "n", "u1", true)), user: alice,
			allowed: []string{"update nodes/finalizers n"}, asked: []string{"update nodes/finalizers n "}},
		{name: "blocking an unknown kind", d: cms, op: admission.OpCreate, obj: obj(ref("example.com/v1", "Widget", "w", "u1", true)), user: alice,
			want: `configmaps "c" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion example.com/v1 Kind Widget: no matches for kind "Widget" in version "example.com/v1"`},
		{name: "update keeping owners", d: cms, op: admission.OpUpdate, obj: obj(ref(apps, "Deployment", "d", "u1", true)), old: obj(ref(apps, "Deployment", "d", "u1", true)), user: alice},
		{name: "update adding an owner, may delete", d: cms, op: admission.OpUpdate, obj: obj(ref(apps, "Deployment", "d", "u1", false)), old: obj(), user: alice,
			allowed: []string{"delete configmaps/ c"}, asked: []string{"delete configmaps/ c ns"}},
		{name: "update adding an owner, may not delete", d: cms, op: admission.OpUpdate, obj: obj(ref(apps, "Deployment", "d", "u1", false)), old: obj(), user: alice,
			want: `configmaps "c" is forbidden: cannot set an ownerRef on a resource you can't delete: not in the test's list, <nil>`, asked: []string{"delete configmaps/ c ns"}},
		{name: "update newly blocking", d: cms, op: admission.OpUpdate, obj: obj(ref(apps, "Deployment", "d", "u1", true)), old: obj(ref(apps, "Deployment", "d", "u1", false)), user: alice,
			allowed: []string{"delete configmaps/ c"},
			want:    `configmaps "c" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: not in the test's list, <nil>`,
			asked:   []string{"delete configmaps/ c ns", "update deployments/finalizers d ns"}},
		{name: "update already blocking", d: cms, op: admission.OpUpdate, obj: obj(ref(apps, "Deployment", "d", "u1", true), ref("v1", "Node", "n", "u2", false)),
			old: obj(ref(apps, "Deployment", "d", "u1", true)), user: alice, allowed: []string{"delete configmaps/ c"}, asked: []string{"delete configmaps/ c ns"}},
		{name: "pod status is exempt", d: pods, sub: "status", op: admission.OpUpdate, obj: obj(ref(apps, "Deployment", "d", "u1", true)), old: obj(), user: alice},
		{name: "server's own write", d: cms, op: admission.OpUpdate, obj: obj(ref(apps, "Deployment", "d", "u1", true)), old: obj()},
		{name: "delete", d: cms, op: admission.OpDelete, old: obj(ref(apps, "Deployment", "d", "u1", true)), user: alice},
	} {
		t.Run(c.name, func(t *testing.T) {
			var asked []security.Attributes
			allowed := map[string]bool{}
			for _, a := range c.allowed {
				allowed[a] = true
			}
			p := NewOwnerReferencesPermissionEnforcement(allowing{allowed: allowed, asked: &asked}, byKind)
			err := p.Validate(context.Background(), &admission.Attributes{Descriptor: c.d, Subresource: c.sub, Operation: c.op, Namespace: "ns", Name: "c",
				Object: c.obj, OldObject: c.old, User: c.user})
			if got := errMessage(err); got != c.want {
				t.Errorf("error %q\nwant  %q", got, c.want)
			}
			var got []string
			for _, a := range asked {
				if a.User != c.user || !a.ResourceRequest {
					t.Errorf("asked %+v, want a resource request for the writer", a)
				}
				got = append(got, a.Verb+" "+a.Resource+"/"+a.Subresource+" "+a.Name+" "+a.Namespace)
			}
			if len(got) != len(c.asked) {
				t.Fatalf("asked %q, want %q", got, c.asked)
			}
			for i := range got {
				if got[i] != c.asked[i] {
					t.Errorf("asked %q, want %q", got, c.asked)
				}
			}
		})
	}
}
