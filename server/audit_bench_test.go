//go:build linux

package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkAuditedCreates measures 10,000 ConfigMap creates from 16
// clients against a fresh durable server with audit off and with every
// request audited at Metadata level to a log file. Target: audited at
// most 15% slower.
func BenchmarkAuditedCreates(b *testing.B) {
	platdBinary(b)
	dir := b.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	doc := "apiVersion: audit.DOMAIN/v1\nkind: Policy\nrules:\n- level: Metadata\n"
	if err := os.WriteFile(policy, []byte(strings.ReplaceAll(doc, "DOMAIN", platBrand.Domain)), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"audit=Metadata", []string{"--audit-policy-file", policy, "--audit-log-path", filepath.Join(dir, "audit.log")}},
		{"audit=off", nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchFreshCreatesWith(b, "configmaps", benchConfigMap, 16, c.flags...)
		})
	}
}
