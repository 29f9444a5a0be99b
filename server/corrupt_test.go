package server_test

import (
	"strconv"
	"strings"
	"testing"

	"platd/bolt"
)

// corruptSecrets starts a server whose secrets "bad1" and "bad2" in
// namespace ns were written with a key the server no longer has, and
// which holds the readable secret "ok".
func corruptSecrets(t *testing.T, ns string, mods ...option) *env {
	t.Helper()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir, append([]option{withEncryption(encryptionFile(t, aesgcm("key1", encKey1)))}, mods...)...))
	e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": ns}}).mustCode(t, 201)
	for _, name := range []string{"bad1", "bad2"} {
		e.do("POST", "/api/v1/namespaces/"+ns+"/secrets", secretBody(name, "v")).mustCode(t, 201)
	}
	e.stop()
	e = startWith(t, testOptions(t, dir, append([]option{withEncryption(encryptionFile(t, aesgcm("key2", encKey2)))}, mods...)...))
	e.do("POST", "/api/v1/namespaces/"+ns+"/secrets", secretBody("ok", "v")).mustCode(t, 201)
	return e
}

// wantBody checks a response's code and whole body.
func wantBody(t *testing.T, what string, r *resp, code int, body string) {
	t.Helper()
	if r.code != code || string(r.body) != body+"\n" {
		t.Errorf("%s: %d %s\nwant %d %s", what, r.code, r.body, code, body)
	}
}

func corruptGetBody(key string) string {
	msg := "StorageError: corrupt object, Code: 7, Key: " + key + ", ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=0: no matching prefix found"
	return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: ` + msg +
		`","reason":"InternalError","details":{"causes":[{"message":"` + msg + `"}]},"code":500}`
}

// TestCorruptObjectsUnsafeDelete: with AllowUnsafeMalformedObjectDeletion
// on, reads of an object that cannot be decrypted answer upstream's 500
// naming its key, a list names every such key, and only a user who may
// also do unsafe-delete-ignore-read-errors can delete it with
// ignoreStoreReadErrorWithClusterBreakingPotential.
func TestCorruptObjectsUnsafeDelete(t *testing.T) {
	t.Parallel()
	e := rbacEnv{corruptSecrets(t, "broken", withRBAC, withUnsafeDelete), ""}
	e.group = e.opts.Brand.Group("rbac.authorization")
	base := "/api/v1/namespaces/broken/secrets"

	wantBody(t, "GET", e.do("GET", base+"/bad1", nil), 500, corruptGetBody("/registry/secrets/broken/bad1"))
	e.do("GET", base+"/ok", nil).mustCode(t, 200)
	cause := func(key string) string {
		return `{"reason":"UnexpectedServerResponse","message":"StorageError: corrupt object, Code: 7, Key: ` + key +
			`, ResourceVersion: 0, AdditionalErrorMsg: data from the storage is not transformable revision=0: no matching prefix found","field":"` + key + `"}`
	}
	listBody := func(keys ...string) string {
		causes := ""
		for i, k := range keys {
			if i > 0 {
				causes += ","
			}
			causes += cause(k)
		}
		return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"failed to read one or more secrets from the storage","reason":"StorageReadError","details":{"name":"list","kind":"secrets","causes":[` + causes + `]},"code":500}`
	}
	wantBody(t, "LIST", e.do("GET", base, nil), 500, listBody("/registry/secrets/broken/bad1", "/registry/secrets/broken/bad2"))
	wantBody(t, "LIST all namespaces", e.do("GET", "/api/v1/secrets?limit=1", nil), 500, listBody("/registry/secrets/broken/bad1", "/registry/secrets/broken/bad2"))
	e.do("GET", "/api/v1/namespaces/broken/configmaps", nil).mustCode(t, 200)
	// Without the option a delete reads the object first, and fails so.
	wantBody(t, "DELETE", e.do("DELETE", base+"/bad1", nil), 500, corruptGetBody("/registry/secrets/broken/bad1"))

	// The option excludes every other delete option.
	invalid := func(field string) string {
		return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"DeleteOptions.` + e.opts.Brand.MetaGroup() +
			` \"\" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .` + field +
			`","reason":"Invalid","details":{"group":"` + e.opts.Brand.MetaGroup() + `","kind":"DeleteOptions","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: true: cannot be set together with .` + field +
			`","field":"ignoreStoreReadErrorWithClusterBreakingPotential"}]},"code":422}`
	}
	unsafe := base + "/bad1?ignoreStoreReadErrorWithClusterBreakingPotential=true"
	wantBody(t, "with dryRun", e.do("DELETE", unsafe+"&dryRun=All", nil), 422, invalid("dryRun"))
	wantBody(t, "with gracePeriodSeconds", e.do("DELETE", unsafe+"&gracePeriodSeconds=0", nil), 422, invalid("gracePeriodSeconds"))
	wantBody(t, "with propagationPolicy", e.do("DELETE", base+"/bad1", map[string]any{"propagationPolicy": "Orphan", "ignoreStoreReadErrorWithClusterBreakingPotential": true}), 422, invalid("propagationPolicy"))
	wantBody(t, "with preconditions", e.do("DELETE", unsafe, map[string]any{"preconditions": map[string]any{"uid": "x"}}), 422, invalid("preconditions"))
	wantBody(t, "with orphanDependents", e.do("DELETE", unsafe+"&orphanDependents=true", nil), 422, invalid("orphanDependents"))
	wantBody(t, "deletecollection", e.do("DELETE", base+"?ignoreStoreReadErrorWithClusterBreakingPotential=true", nil), 422,
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"DeleteOptions.`+e.opts.Brand.MetaGroup()+
			` \"\" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option","reason":"Invalid","details":{"group":"`+
			e.opts.Brand.MetaGroup()+`","kind":"DeleteOptions","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option","field":"ignoreStoreReadErrorWithClusterBreakingPotential"}]},"code":422}`)

	// Alice may delete secrets, but not unsafely until she may do the verb.
	e.do("POST", e.api("broken", "roles"), e.role("Role", "broken", "deleter", policy([]string{"get", "list", "delete"}, []string{""}, []string{"secrets"}))).mustCode(t, 201)
	e.do("POST", e.api("broken", "rolebindings"), e.binding("RoleBinding", "broken", "alice-deleter", "Role", "deleter", user("alice"))).mustCode(t, 201)
	e.eventuallyCode(t, "GET", base+"/ok", 200)
	wantBody(t, "unsafe delete without the verb", e.alice("DELETE", unsafe, nil), 403,
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"secrets \"bad1\" is forbidden: not permitted to do \"unsafe-delete-ignore-read-errors\", reason: ","reason":"Forbidden","details":{"name":"bad1","kind":"secrets"},"code":403}`)
	e.do("POST", e.api("broken", "roles"), e.role("Role", "broken", "unsafe", policy([]string{"unsafe-delete-ignore-read-errors"}, []string{""}, []string{"secrets"}))).mustCode(t, 201)
	e.do("POST", e.api("broken", "rolebindings"), e.binding("RoleBinding", "broken", "alice-unsafe", "Role", "unsafe", user("alice"))).mustCode(t, 201)

	// A watcher sees the deletion, with a bare object of the name.
	rv, _ := path(e.do("GET", "/api/v1/namespaces/broken/configmaps", nil).mustCode(t, 200).obj(t), "metadata.resourceVersion").(string)
	w := e.watch(base + "?watch=1&resourceVersion=" + rv)
	r := e.eventuallyCode(t, "DELETE", unsafe, 200)
	wantBody(t, "unsafe delete", r, 200, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"bad1","kind":"Secret"},"code":200}`)
	ev := w.expect("DELETED", "bad1")
	if path(ev.Object, "kind") != "Secret" || path(ev.Object, "metadata.namespace") != "broken" {
		t.Errorf("watch event of the unsafe delete: %v", ev.Object)
	}
	wantRV, _ := strconv.Atoi(rv)
	if got, _ := strconv.Atoi(path(ev.Object, "metadata.resourceVersion").(string)); got <= wantRV {
		t.Errorf("deleted object's resourceVersion %d, want above %d", got, wantRV)
	}
	e.do("GET", base+"/bad1", nil).mustCode(t, 404)
	wantBody(t, "LIST after one delete", e.do("GET", base, nil), 500, listBody("/registry/secrets/broken/bad2"))

	// The option is for corrupt objects only.
	wantBody(t, "unsafe delete of a readable object", e.do("DELETE", base+"/ok?ignoreStoreReadErrorWithClusterBreakingPotential=true", nil), 422,
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"secrets \"ok\" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option","reason":"Invalid","details":{"name":"ok","kind":"secrets","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option","field":"ignoreStoreReadErrorWithClusterBreakingPotential"}]},"code":422}`)
	e.do("DELETE", base+"/missing?ignoreStoreReadErrorWithClusterBreakingPotential=true", nil).mustCode(t, 422)

	e.do("DELETE", base+"/bad2?ignoreStoreReadErrorWithClusterBreakingPotential=true", nil).mustCode(t, 200)
	if items, _ := e.do("GET", base, nil).mustCode(t, 200).obj(t)["items"].([]any); len(items) != 1 {
		t.Errorf("secrets after the repair: %v", items)
	}
}

// TestCorruptObjectsGateOff: with the gate off, reads answer the bare
// cause (upstream's texts), a list names the first key, and the option is
// ignored: the delete fails as a read does.
func TestCorruptObjectsGateOff(t *testing.T) {
	t.Parallel()
	e := corruptSecrets(t, "broken")
	base := "/api/v1/namespaces/broken/secrets"
	bare := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: no matching prefix found","reason":"InternalError","details":{"causes":[{"message":"no matching prefix found"}]},"code":500}`
	wantBody(t, "GET", e.do("GET", base+"/bad1", nil), 500, bare)
	wantBody(t, "LIST", e.do("GET", base, nil), 500,
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: unable to transform key \"/registry/secrets/broken/bad1\": no matching prefix found","reason":"InternalError","details":{"causes":[{"message":"unable to transform key \"/registry/secrets/broken/bad1\": no matching prefix found"}]},"code":500}`)
	wantBody(t, "DELETE with the option", e.do("DELETE", base+"/bad1?ignoreStoreReadErrorWithClusterBreakingPotential=true", nil), 500, bare)
	// Objects elsewhere, and controllers, are unaffected.
	e.do("GET", base+"/ok", nil).mustCode(t, 200)
	e.do("DELETE", "/api/v1/namespaces/broken", nil).mustCode(t, 200)
}

// TestUndecodableObject: bytes that are not an object, written into the
// file while the server was stopped, are a corrupt object too.
func TestUndecodableObject(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir, withUnsafeDelete))
	r := e.do("POST", "/api/v1/namespaces/default/configmaps", map[string]any{"metadata": map[string]any{"name": "cm"}}).mustCode(t, 201)
	rv := path(r.obj(t), "metadata.resourceVersion").(string)
	e.stop()
	if err := bolt.OverwriteStored(e.opts.DBPath(), "/configmaps/default/cm", []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	audit, log := withAudit(t, "apiVersion: audit.DOMAIN/v1\nkind: Policy\nrules:\n- level: Metadata\n  verbs: [delete]\n  omitStages: [RequestReceived]\n")
	e = startWith(t, testOptions(t, dir, withUnsafeDelete, audit))
	msg := `StorageError: corrupt object, Code: 7, Key: /registry/configmaps/default/cm, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=` + rv + `: invalid character 'g' looking for beginning of value`
	wantBody(t, "GET", e.do("GET", "/api/v1/namespaces/default/configmaps/cm", nil), 500,
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: `+msg+`","reason":"InternalError","details":{"causes":[{"message":"`+msg+`"}]},"code":500}`)
	del := e.do("DELETE", "/api/v1/namespaces/default/configmaps/cm?ignoreStoreReadErrorWithClusterBreakingPotential=true", nil).mustCode(t, 200)
	e.do("GET", "/api/v1/namespaces/default/configmaps/cm", nil).mustCode(t, 404)
	// The audit event says the delete was unsafe.
	ev := auditEvents(t, log, del.header.Get("Audit-Id"), 1)[0]
	if want := `"apiserver.` + platBrand.Domain + `/unsafe-delete-ignore-read-error":""`; !strings.Contains(ev, want) {
		t.Errorf("audit event %s\nlacks %s", ev, want)
	}
	e.do("POST", "/api/v1/namespaces/default/configmaps", map[string]any{"metadata": map[string]any{"name": "cm"}}).mustCode(t, 201)
}
