package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// On etcd a storage error names the key as etcd holds it, under
// --etcd-prefix, as upstream's do: the key it names is there.
func TestEtcdStorageErrorKey(t *testing.T) {
	t.Parallel()
	endpoint, prefix := embeddedEtcd(t)
	e := startWith(t, testOptions(t, t.TempDir(), withEtcd(endpoint, prefix)))
	base := "/api/v1/namespaces/default/configmaps"
	uid := path(e.do("POST", base, `{"metadata":{"name":"keyed"},"data":{"a":"1"}}`).mustCode(t, 201).obj(t), "metadata.uid").(string)
	const other = "00000000-0000-0000-0000-000000000000"
	got := e.do("PUT", base+"/keyed", fmt.Sprintf(`{"metadata":{"name":"keyed","uid":%q},"data":{"a":"2"}}`, other)).mustCode(t, 409).obj(t)
	key := prefix + "/configmaps/default/keyed"
	want := fmt.Sprintf(`Operation cannot be fulfilled on configmaps "keyed": StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s`, key, other, uid)
	if got["reason"] != "Conflict" || got["message"] != want {
		t.Errorf("got %v %q\nwant Conflict %q", got["reason"], got["message"], want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if resp, err := etcdClient(t, endpoint).Get(ctx, key, clientv3.WithCountOnly()); err != nil || resp.Count != 1 {
		t.Errorf("etcd holds %s: %v %v", key, resp, err)
	}
}
