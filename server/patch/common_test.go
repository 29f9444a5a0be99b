package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"platd/config"
	"platd/server/apierr"
	"platd/server/schema"
)

var (
	catalogOnce sync.Once
	catalog     *schema.Catalog
	catalogErr  error
)

// testSchema returns a built-in schema of the core group from the catalog
// of the kubernetes brand.
func testSchema(t testing.TB, kind string) *schema.Schema {
	t.Helper()
	catalogOnce.Do(func() {
		b, err := config.LookupBrand("kubernetes")
		if err != nil {
			catalogErr = err
			return
		}
		catalog, catalogErr = schema.Load(b)
	})
	if catalogErr != nil {
		t.Fatalf("load catalog: %v", catalogErr)
	}
	s := catalog.ByGVK("", "v1", kind)
	if s == nil {
		t.Fatalf("no schema for %s", kind)
	}
	return s
}

// canonical re-encodes a JSON document with sorted members and no spaces.
func canonical(t testing.TB, doc []byte) string {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", doc, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// wantStatus checks the Status err renders as.
func wantStatus(t *testing.T, err error, code int, reason apierr.Reason, message string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %d %s %q", code, reason, message)
	}
	st := apierr.FromError(err).Status
	if int(st.Code) != code || st.Reason != reason || st.Message != message {
		t.Fatalf("got %d %q %q, want %d %q %q", st.Code, st.Reason, st.Message, code, reason, message)
	}
}

// wantKind checks err wraps the sentinel.
func wantKind(t *testing.T, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v does not wrap %v", err, kind)
	}
}
