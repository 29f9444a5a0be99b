package protobuf

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"platd/config"
	"platd/server/schema"
)

// nested returns depth JSONSchemaProps messages nested through field 28
// ("not"), built outside-in in linear time.
func nested(depth int) []byte {
	const not = 28
	sizes := make([]int, depth+1)
	tag := protowire.SizeTag(not)
	for i := 1; i <= depth; i++ {
		sizes[i] = sizes[i-1] + tag + protowire.SizeVarint(uint64(sizes[i-1]))
	}
	b := make([]byte, 0, sizes[depth])
	for i := depth; i >= 1; i-- {
		b = protowire.AppendTag(b, not, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(sizes[i-1]))
	}
	return b
}

func TestDeepNesting(t *testing.T) {
	t.Parallel()
	b, _ := config.LookupBrand("plat")
	name := schema.ReverseDomain(b.Domain) + ".apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"
	props := catalog(t, "plat").Schema(name)
	if props == nil {
		t.Fatalf("no schema %s", name)
	}
	if _, err := Unmarshal(nested(maxDepth+10), props); !errors.Is(err, ErrMalformed) {
		t.Fatalf("too deep: %v", err)
	}
	raw := nested(500)
	obj, err := Unmarshal(raw, props)
	if err != nil {
		t.Fatal(err)
	}
	depth := 0
	for x := obj; x != nil; depth++ {
		x, _ = x["not"].(map[string]any)
	}
	if depth != 501 {
		t.Fatalf("depth %d", depth)
	}
	pb, err := Marshal(nil, obj, props)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Unmarshal(pb, props)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Marshal(nil, back, props)
	if err != nil || string(again) != string(pb) {
		t.Fatalf("deep message did not round-trip: %v", err)
	}
}
