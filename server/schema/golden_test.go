package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"platd/config"
)

var (
	catalogsOnce sync.Once
	catalogs     map[string]*Catalog
)

// testCatalog returns the shared catalog of a brand, loaded once.
func testCatalog(t testing.TB, brand string) *Catalog {
	t.Helper()
	catalogsOnce.Do(func() {
		catalogs = map[string]*Catalog{}
		for _, n := range config.BrandNames() {
			b, err := config.LookupBrand(n)
			if err != nil {
				panic(err)
			}
			c, err := Load(b)
			if err != nil {
				panic(err)
			}
			catalogs[n] = c
		}
	})
	return catalogs[brand]
}

// bn spells a name with the brand's domains: "@R@" is the reverse domain,
// "@D@" the domain.
func bn(brand, s string) string {
	b, err := config.LookupBrand(brand)
	if err != nil {
		panic(err)
	}
	return strings.NewReplacer("@R@", ReverseDomain(b.Domain), "@D@", b.Domain).Replace(s)
}

// kn spells a name in the kubernetes brand.
func kn(s string) string { return bn("kubernetes", s) }

// schemaOf finds the schema of a JSON object by its kind and apiVersion.
func schemaOf(t testing.TB, c *Catalog, body []byte) *Schema {
	t.Helper()
	var tm struct{ Kind, APIVersion string }
	if err := json.Unmarshal(body, &tm); err != nil {
		t.Fatal(err)
	}
	group, version, ok := strings.Cut(tm.APIVersion, "/")
	if !ok {
		group, version = "", tm.APIVersion
	}
	s := c.ByGVK(group, version, tm.Kind)
	if s == nil {
		t.Fatalf("no schema for %s %s", tm.APIVersion, tm.Kind)
	}
	return s
}

// TestGoldenRoundTrip checks that Encode(Decode(x)) reproduces the compact
// form of upstream response bodies byte for byte.
func TestGoldenRoundTrip(t *testing.T) {
	t.Parallel()
	c := testCatalog(t, "kubernetes")
	files, err := filepath.Glob("testdata/golden/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := json.Compact(&want, raw); err != nil {
				t.Fatal(err)
			}
			s := schemaOf(t, c, want.Bytes())
			d, err := Decode(want.Bytes(), s)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if len(d.Unknown) > 0 || len(d.Duplicates) > 0 {
				t.Errorf("unknown %v duplicates %v", d.Unknown, d.Duplicates)
			}
			got := Encode(nil, d.Object, s)
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("round trip differs\n got: %s\nwant: %s", got, want.Bytes())
			}
		})
	}
}
