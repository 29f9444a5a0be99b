package builtin

import (
	"context"
	"testing"

	"platd/security"
	"platd/server/admission"
	"platd/server/apierr"
	"platd/server/registry"
)

func TestNodeRestriction(t *testing.T) {
	t.Parallel()
	core := coreV1(brand)
	pods, nodes, claims, accounts := kindOf(core, "Pod"), kindOf(core, "Node"), kindOf(core, "PersistentVolumeClaim"), kindOf(core, "ServiceAccount")
	leases, csiNodes := kindOf(coordinationV1(brand), "Lease"), kindOf(storageV1(brand), "CSINode")
	p := NewNodeRestriction(brand, pods, nodes, true)
	mirror := brand.Label("config.mirror")
	l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{
		nodes: {decodeJSON(t, `{"metadata":{"name":"n1","uid":"n1-uid"}}`)},
		pods: {
			decodeJSON(t, `{"metadata":{"name":"mine","uid":"mine-uid"},"spec":{"nodeName":"n1"}}`),
			decodeJSON(t, `{"metadata":{"name":"theirs","uid":"theirs-uid"},"spec":{"nodeName":"n2"}}`),
		},
	}}
	n1 := &security.User{Name: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}}
	owner := `"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":"n1-uid","controller":true}]`
	mirrorPod := func(meta, spec string) registry.Object {
		return decodeJSON(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"static","annotations":{"`+mirror+`":"h"}`+meta+`},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"x"`+spec+`}]}}`)
	}
	withVolume := func(volume string) registry.Object {
		pod := mirrorPod(","+owner, "")
		pod["spec"].(map[string]any)["volumes"] = []any{decodeJSON(t, volume)}
		return pod
	}
	node := func(labels, spec string) registry.Object {
		return decodeJSON(t, `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{`+labels+`}},"spec":{`+spec+`}}`)
	}
	claim := func(labels, status string) registry.Object {
		return decodeJSON(t, `{"metadata":{"name":"c","resourceVersion":"1","labels":{`+labels+`}},"spec":{"resources":{"requests":{"storage":"1Gi"}}},"status":{`+status+`}}`)
	}
	tests := []struct {
		name      string
		user      *security.User
		d         *registry.Descriptor
		sub, op   string
		ns, objNm string
		obj, old  registry.Object
		// want is the refusal's message, "" when admitted; code its
		// status.
		want string
		code int
	}{
		{name: "not a node", user: &security.User{Name: "alice"}, d: pods, op: admission.OpCreate, obj: mirrorPod("", "")},
		{name: "node prefix without the group", user: &security.User{Name: "system:node:n1"}, d: pods, op: admission.OpCreate, obj: mirrorPod("", "")},
		{name: "node without a name", user: &security.User{Name: "system:node:", Groups: []string{"system:nodes"}}, d: pods, op: admission.OpDelete, objNm: "x",
			want: `pods "x" is forbidden: could not determine node from user "system:node:"`},
		{name: "connect passes", user: n1, d: pods, sub: "exec", op: admission.OpConnect, objNm: "theirs"},
		{name: "other resources pass", user: n1, d: kindOf(core, "ConfigMap"), op: admission.OpCreate, obj: decodeJSON(t, `{"metadata":{"name":"c"}}`)},

		{name: "mirror pod", user: n1, d: pods, op: admission.OpCreate, obj: mirrorPod(","+owner, "")},
		{name: "not a mirror pod", user: n1, d: pods, op: admission.OpCreate, obj: decodeJSON(t, `{"metadata":{"name":"p"},"spec":{"nodeName":"n1"}}`),
			want: `pods "p" is forbidden: pod does not have "` + mirror + `" annotation, node "n1" can only create mirror pods`},
		{name: "mirror pod of another node", user: n1, d: pods, op: admission.OpCreate,
			obj:  decodeJSON(t, `{"metadata":{"generateName":"g-","annotations":{"`+mirror+`":""}},"spec":{"nodeName":"n2"}}`),
			want: `pods "g-" is forbidden: node "n1" can only create pods with spec.nodeName set to itself`},
		{name: "no owner", user: n1, d: pods, op: admission.OpCreate, obj: mirrorPod("", ""),
			want: `pods "static" is forbidden: node "n1" can only create pods with an owner reference set to itself`},
		{name: "two owners", user: n1, d: pods, op: admission.OpCreate,
			obj:  mirrorPod(`,"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":"n1-uid"},{"apiVersion":"v1","kind":"Node","name":"n1","uid":"n1-uid"}]`, ""),
			want: `pods "static" is forbidden: node "n1" can only create pods with a single owner reference set to itself`},
		{name: "owner another node", user: n1, d: pods, op: admission.OpCreate,
			obj:  mirrorPod(`,"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n2","uid":"n1-uid","controller":true}]`, ""),
			want: `pods "static" is forbidden: node "n1" can only create pods with an owner reference set to itself`},
		{name: "owner not controller", user: n1, d: pods, op: admission.OpCreate,
			obj:  mirrorPod(`,"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":"n1-uid"}]`, ""),
			want: `pods "static" is forbidden: node "n1" can only create pods with a controller owner reference set to itself`},
		{name: "owner blocks deletion", user: n1, d: pods, op: admission.OpCreate,
			obj:  mirrorPod(`,"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":"n1-uid","controller":true,"blockOwnerDeletion":true}]`, ""),
			want: `pods "static" is forbidden: node "n1" must not set blockOwnerDeletion on an owner reference`},
		{name: "owner uid stale", user: n1, d: pods, op: admission.OpCreate,
			obj:  mirrorPod(`,"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":"old","controller":true}]`, ""),
			want: `pods "static" is forbidden: node n1 UID mismatch: expected old got n1-uid`},
		{name: "owner node missing", user: &security.User{Name: "system:node:n3", Groups: []string{"system:nodes"}}, d: pods, op: admission.OpCreate,
			obj:  decodeJSON(t, `{"metadata":{"name":"s","annotations":{"`+mirror+`":""},"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n3","uid":"u","controller":true}]},"spec":{"nodeName":"n3"}}`),
			want: `nodes "n3" not found`, code: 404},
		{name: "service account", user: n1, d: pods, op: admission.OpCreate,
			obj: func() registry.Object {
				o := mirrorPod(","+owner, "")
				o["spec"].(map[string]any)["serviceAccountName"] = "default"
				return o
			}(),
			want: `pods "static" is forbidden: node "n1" can not create pods that reference a service account`},
		{name: "secret from env", user: n1, d: pods, op: admission.OpCreate, obj: mirrorPod(","+owner, `,"env":[{"name":"e","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}]`),
			want: `pods "static" is forbidden: node "n1" can not create pods that reference secrets`},
		{name: "config map from env", user: n1, d: pods, op: admission.OpCreate, obj: mirrorPod(","+owner, `,"envFrom":[{"configMapRef":{"name":"c"}}]`),
			want: `pods "static" is forbidden: node "n1" can not create pods that reference configmaps`},
		{name: "projected config map", user: n1, d: pods, op: admission.OpCreate, obj: withVolume(`{"name":"v","projected":{"sources":[{"configMap":{"name":"c"}}]}}`),
			want: `pods "static" is forbidden: node "n1" can not create pods that reference configmaps`},
		{name: "cluster trust bundle", user: n1, d: pods, op: admission.OpCreate, obj: withVolume(`{"name":"v","projected":{"sources":[{"clusterTrustBundle":{"name":"b","path":"p"}}]}}`),
			want: `pods "static" is forbidden: node "n1" can not create pods that reference clustertrustbundles`},
		{name: "claim", user: n1, d: pods, op: admission.OpCreate, obj: withVolume(`{"name":"v","persistentVolumeClaim":{"claimName":"c"}}`),
			want: `pods "static" is forbidden: node "n1" can not create pods that reference persistentvolumeclaims`},
		{name: "host path is fine", user: n1, d: pods, op: admission.OpCreate, obj: withVolume(`{"name":"v","hostPath":{"path":"/data"}}`)},
		{name: "pod update", user: n1, d: pods, op: admission.OpUpdate, objNm: "mine", obj: l.objs[pods][0], old: l.objs[pods][0],
			want: `pods "mine" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods`},
		{name: "delete own pod", user: n1, d: pods, op: admission.OpDelete, objNm: "mine", old: l.objs[pods][0]},
		{name: "delete another node's pod", user: n1, d: pods, op: admission.OpDelete, objNm: "theirs", old: l.objs[pods][1],
			want: `pods "theirs" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself`},
		{name: "binding", user: n1, d: pods, sub: "binding", op: admission.OpCreate, objNm: "mine",
			want: `pods "mine" is forbidden: unexpected pod subresource "binding", only 'status' and 'eviction' are allowed`},

		{name: "own pod status", user: n1, d: pods, sub: "status", op: admission.OpUpdate, objNm: "mine",
			old: decodeJSON(t, `{"metadata":{"name":"mine","labels":{}},"spec":{"nodeName":"n1"}}`),
			obj: decodeJSON(t, `{"metadata":{"name":"mine"},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}}`)},
		{name: "other pod status", user: n1, d: pods, sub: "status", op: admission.OpUpdate, objNm: "theirs", old: l.objs[pods][1], obj: l.objs[pods][1],
			want: `pods "theirs" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself`},
		{name: "labels through status", user: n1, d: pods, sub: "status", op: admission.OpUpdate, objNm: "mine", old: l.objs[pods][0],
			obj:  decodeJSON(t, `{"metadata":{"name":"mine","labels":{"a":"b"}},"spec":{"nodeName":"n1"}}`),
			want: `pods "mine" is forbidden: node "n1" cannot update labels through pod status`},
		{name: "claim statuses", user: n1, d: pods, sub: "status", op: admission.OpUpdate, objNm: "mine", old: l.objs[pods][0],
			obj:  decodeJSON(t, `{"metadata":{"name":"mine"},"spec":{"nodeName":"n1"},"status":{"resourceClaimStatuses":[{"name":"c","resourceClaimName":"x"}]}}`),
			want: `pods "mine" is forbidden: node "n1" cannot update resource claim statues`},
		{name: "evict own pod", user: n1, d: pods, sub: "eviction", op: admission.OpCreate, objNm: "mine", obj: decodeJSON(t, `{"metadata":{"name":"mine"}}`)},
		{name: "evict another node's pod", user: n1, d: pods, sub: "eviction", op: admission.OpCreate, objNm: "theirs", obj: decodeJSON(t, `{"metadata":{"name":"theirs"}}`),
			want: `pods "theirs" is forbidden: node n1 can only evict pods with spec.nodeName set to itself`},
		{name: "evict a missing pod", user: n1, d: pods, sub: "eviction", op: admission.OpCreate, objNm: "gone", obj: decodeJSON(t, `{}`),
			want: `pods "gone" not found`, code: 404},

		{name: "own node", user: n1, d: nodes, op: admission.OpCreate, objNm: "n1", obj: node(`"`+brand.Label("hostname")+`":"n1","node.`+brand.LongDomain+`/pool":"a","x/y":"z","plain":"1"`, "")},
		{name: "another node", user: n1, d: nodes, op: admission.OpUpdate, objNm: "n2", obj: node("", ""), old: node("", ""),
			want: `nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`},
		{name: "node with config source", user: n1, d: nodes, op: admission.OpCreate, objNm: "n1", obj: node("", `"configSource":{}`),
			want: `nodes "n1" is forbidden: node "n1" is not allowed to create pods with a non-nil configSource`},
		{name: "restricted labels on create", user: n1, d: nodes, op: admission.OpCreate, objNm: "n1",
			obj:  node(`"node-restriction.`+brand.LongDomain+`/pool":"a","other.`+brand.LongDomain+`/x":"1","a.node-restriction.`+brand.LongDomain+`/b":"2"`, ""),
			want: `nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: a.node-restriction.` + brand.LongDomain + `/b, node-restriction.` + brand.LongDomain + `/pool, other.` + brand.LongDomain + `/x`},
		{name: "status update", user: n1, d: nodes, sub: "status", op: admission.OpUpdate, objNm: "n1",
			old: node(`"a":"1"`, `"taints":[{"key":"k","effect":"NoSchedule"}]`), obj: node(`"a":"2"`, `"taints":[{"key":"k","effect":"NoSchedule"}]`)},
		{name: "taints", user: n1, d: nodes, op: admission.OpUpdate, objNm: "n1", old: node("", `"taints":[{"key":"k","effect":"NoSchedule"}]`), obj: node("", ""),
			want: `nodes "n1" is forbidden: node "n1" is not allowed to modify taints`},
		{name: "no taints and empty taints", user: n1, d: nodes, op: admission.OpUpdate, objNm: "n1", old: node("", `"taints":[]`), obj: node("", "")},
		{name: "owners", user: n1, d: nodes, op: admission.OpUpdate, objNm: "n1", old: node("", ""),
			obj:  decodeJSON(t, `{"metadata":{"name":"n1","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"u"}]}}`),
			want: `nodes "n1" is forbidden: node "n1" is not allowed to modify ownerReferences`},
		{name: "new config source", user: n1, d: nodes, op: admission.OpUpdate, objNm: "n1", old: node("", ""),
			obj:  node("", `"configSource":{"configMap":{"name":"c","namespace":"n","kubeletConfigKey":"k"}}`),
			want: `nodes "n1" is forbidden: node "n1" is not allowed to update configSource to a new non-nil configSource`},
		{name: "labels on update", user: n1, d: nodes, op: admission.OpUpdate, objNm: "n1", old: node(`"`+brand.Label("role")+`":"x"`, ""), obj: node("", ""),
			want: `nodes "n1" is forbidden: is not allowed to modify labels: ` + brand.Label("role")},
		{name: "delete own node", user: n1, d: nodes, op: admission.OpDelete, objNm: "n1", old: node("", "")},

		{name: "claim status", user: n1, d: claims, sub: "status", op: admission.OpUpdate, objNm: "c",
			old: claim("", `"phase":"Bound"`), obj: claim("", `"phase":"Bound","capacity":{"storage":"2Gi"},"allocatedResources":{"storage":"2Gi"}`)},
		{name: "claim status and more", user: n1, d: claims, sub: "status", op: admission.OpUpdate, objNm: "c",
			old: claim("", `"phase":"Bound"`), obj: claim(`"a":"b"`, `"phase":"Lost"`),
			want: `persistentvolumeclaims "c" is forbidden: node "n1" is not allowed to update fields other than status.capacity and status.conditions: metadata.labels, status.phase`},
		{name: "claim spec", user: n1, d: claims, op: admission.OpUpdate, objNm: "c", old: claim("", ""), obj: claim("", ""),
			want: `persistentvolumeclaims "c" is forbidden: may only update PVC status`},

		{name: "token for own pod", user: n1, d: accounts, sub: "token", op: admission.OpCreate, objNm: "default",
			obj: decodeJSON(t, `{"spec":{"boundObjectRef":{"apiVersion":"v1","kind":"Pod","name":"mine","uid":"mine-uid"}}}`)},
		{name: "unbound token", user: n1, d: accounts, sub: "token", op: admission.OpCreate, objNm: "default", obj: decodeJSON(t, `{"spec":{}}`),
			want: `serviceaccounts "default" is forbidden: node requested token not bound to a pod`},
		{name: "token without uid", user: n1, d: accounts, sub: "token", op: admission.OpCreate, objNm: "default",
			obj:  decodeJSON(t, `{"spec":{"boundObjectRef":{"apiVersion":"v1","kind":"Pod","name":"mine"}}}`),
			want: `serviceaccounts "default" is forbidden: node requested token with a pod binding without a uid`},
		{name: "token for a recreated pod", user: n1, d: accounts, sub: "token", op: admission.OpCreate, objNm: "default",
			obj:  decodeJSON(t, `{"spec":{"boundObjectRef":{"apiVersion":"v1","kind":"Pod","name":"mine","uid":"old"}}}`),
			want: `serviceaccounts "default" is forbidden: the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated`},
		{name: "token for another node's pod", user: n1, d: accounts, sub: "token", op: admission.OpCreate, objNm: "default",
			obj:  decodeJSON(t, `{"spec":{"boundObjectRef":{"apiVersion":"v1","kind":"Pod","name":"theirs","uid":"theirs-uid"}}}`),
			want: `serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node`},
		{name: "account update passes", user: n1, d: accounts, op: admission.OpUpdate, objNm: "default", obj: decodeJSON(t, `{}`), old: decodeJSON(t, `{}`)},

		{name: "own lease", user: n1, d: leases, op: admission.OpCreate, ns: brand.NodeLeaseNamespace, obj: decodeJSON(t, `{"metadata":{"name":"n1"}}`)},
		{name: "lease elsewhere", user: n1, d: leases, op: admission.OpCreate, ns: "default", obj: decodeJSON(t, `{"metadata":{"name":"n1"}}`),
			want: `leases.` + leases.Group + ` "n1" is forbidden: can only access leases in the "` + brand.NodeLeaseNamespace + `" system namespace`},
		{name: "another node's lease", user: n1, d: leases, op: admission.OpUpdate, ns: brand.NodeLeaseNamespace, objNm: "n2",
			want: `leases.` + leases.Group + ` "n2" is forbidden: can only access node lease with the same name as the requesting node`},
		{name: "own csinode", user: n1, d: csiNodes, op: admission.OpDelete, objNm: "n1"},
		{name: "another csinode", user: n1, d: csiNodes, op: admission.OpCreate, obj: decodeJSON(t, `{"metadata":{"name":"n2"}}`),
			want: `csinodes.` + csiNodes.Group + ` "n2" is forbidden: can only access CSINode with the same name as the requesting node`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &admission.Attributes{Descriptor: tt.d, Subresource: tt.sub, Operation: tt.op, Namespace: tt.ns, Name: tt.objNm,
				Object: tt.obj, OldObject: tt.old, User: tt.user, Lookup: l}
			if a.Name == "" && tt.op == admission.OpCreate && tt.obj != nil && tt.sub == "" {
				a.Name = str(tt.obj, "metadata", "name")
			}
			out, err := p.Mutate(context.Background(), a)
			if out != nil {
				t.Errorf("the plugin returned an object: %v", out)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("admitted, want %q", tt.want)
			}
			st := apierr.FromError(err).Status
			code := tt.code
			if code == 0 {
				code = 403
			}
			if st.Message != tt.want || int(st.Code) != code {
				t.Fatalf("refused with %d %q\nwant       %d %q", st.Code, st.Message, code, tt.want)
			}
			if code == 403 && (st.Details == nil || st.Details.Kind != tt.d.Resource || st.Details.Group != tt.d.Group) {
				t.Errorf("details %+v, want the resource %s", st.Details, tt.d.GroupResource())
			}
		})
	}
}

// TestNodeRestrictionClaimStatusWithoutRecovery: without the expansion
// recovery feature a node may not write a claim's allocated resources.
func TestNodeRestrictionClaimStatusWithoutRecovery(t *testing.T) {
	t.Parallel()
	core := coreV1(brand)
	p := NewNodeRestriction(brand, kindOf(core, "Pod"), kindOf(core, "Node"), false)
	old := decodeJSON(t, `{"metadata":{"name":"c"},"status":{"phase":"Bound"}}`)
	obj := decodeJSON(t, `{"metadata":{"name":"c"},"status":{"phase":"Bound","allocatedResources":{"storage":"2Gi"}}}`)
	_, err := p.Mutate(context.Background(), &admission.Attributes{Descriptor: kindOf(core, "PersistentVolumeClaim"), Subresource: "status", Operation: admission.OpUpdate,
		Name: "c", Object: obj, OldObject: old, User: &security.User{Name: "system:node:n1", Groups: []string{"system:nodes"}}, Lookup: fakeLookup{}})
	want := `persistentvolumeclaims "c" is forbidden: node "n1" is not allowed to update fields other than status.capacity and status.conditions: status.allocatedResources`
	if err == nil || apierr.FromError(err).Status.Message != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}
