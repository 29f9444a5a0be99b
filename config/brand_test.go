package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLookupBrand(t *testing.T) {
	t.Parallel()
	for _, name := range BrandNames() {
		b, err := LookupBrand(name)
		if err != nil || b.Name != name {
			t.Fatalf("%s: %v %+v", name, err, b)
		}
		if b.MetaGroup() != "meta."+b.Domain || b.Group("") != b.Domain || b.Label("x") != b.LongDomain+"/x" {
			t.Errorf("%s: derived names %q %q %q", name, b.MetaGroup(), b.Group(""), b.Label("x"))
		}
		if p, ok := b.Unbrand("rbac.authorization." + b.Domain); !ok || p != "rbac.authorization" {
			t.Errorf("%s: Unbrand gave %q %v", name, p, ok)
		}
	}
	if _, err := LookupBrand("acme"); err == nil || !strings.Contains(err.Error(), `unknown brand "acme"`) {
		t.Errorf("unknown brand: %v", err)
	}
}

// TestNoBrandLiterals keeps every brand spelling inside this package's
// Brand definition: a literal elsewhere would survive a brand switch.
func TestNoBrandLiterals(t *testing.T) {
	t.Parallel()
	var literals []string
	for _, b := range Brands {
		literals = append(literals, b.Domain, b.LongDomain, b.SystemNamespace, b.PublicNamespace,
			b.NodeLeaseNamespace, b.ProtobufMediaType, b.ExecInfoEnv, b.RootCAConfigMap)
	}
	root := ".."
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || filepath.Base(p) == "brand.go" && filepath.Base(filepath.Dir(p)) == "config" || strings.HasSuffix(p, "brand_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			// Module paths of dependencies are not brand spellings.
			line = strings.ReplaceAll(line, "sigs."+Brands["kubernetes"].Domain+"/", "")
			for _, l := range literals {
				if strings.Contains(line, l) {
					t.Errorf("%s:%d: brand literal %q outside config/brand.go", p, i+1, l)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
