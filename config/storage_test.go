package config

import "testing"

// TestStorageKeyPrefix: storage errors name a key under --etcd-prefix on
// etcd, however it was spelled, and under the default with bbolt, whatever
// --etcd-prefix says there.
func TestStorageKeyPrefix(t *testing.T) {
	for _, c := range []struct {
		backend, prefix, want string
	}{
		{StorageBackendBBolt, "", DefaultEtcdPrefix},
		{"", "", DefaultEtcdPrefix},
		{StorageBackendBBolt, "/other", DefaultEtcdPrefix},
		{StorageBackendETCD3, "/site-a/registry", "/site-a/registry"},
		{StorageBackendETCD3, "/site-a/registry/", "/site-a/registry"},
		{StorageBackendETCD3, "", DefaultEtcdPrefix},
	} {
		o := Options{StorageBackend: c.backend, Etcd: EtcdOptions{Prefix: c.prefix}}
		if got := o.StorageKeyPrefix(); got != c.want {
			t.Errorf("backend %q, --etcd-prefix %q: %q, want %q", c.backend, c.prefix, got, c.want)
		}
	}
}
