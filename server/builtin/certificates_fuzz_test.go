package builtin

import (
	"encoding/base64"
	"testing"

	"platd/server/registry"
)

// FuzzCSRWrite feeds arbitrary requests, certificates and signer names
// through a create and a status write: every input gets errors or none,
// never a panic.
func FuzzCSRWrite(f *testing.F) {
	f.Add([]byte("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n"), []byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"), "example.com/a")
	f.Add([]byte{}, []byte("x"), "a/b/c")
	f.Fuzz(func(t *testing.T, req, cert []byte, signer string) {
		cat, err := loadCatalog()
		if err != nil {
			t.Fatal(err)
		}
		d := certificateSigningRequests(brand, Services{})
		d.Schema = cat.ByGVK(d.Group, d.Version, d.Kind)
		obj := registry.Object{"metadata": map[string]any{"name": "c"}, "spec": map[string]any{
			"request": base64.StdEncoding.EncodeToString(req), "signerName": signer, "usages": []any{"any"}}}
		stored, _ := create(d, obj)
		write := registry.Object{"status": map[string]any{"certificate": base64.StdEncoding.EncodeToString(cert),
			"conditions": []any{map[string]any{"type": signer}}}}
		subUpdate(d, write, stored, "status")
		subUpdate(d, write, stored, "approval")
	})
}
