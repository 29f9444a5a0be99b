package server_test

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"platd/server"
)

// flipMarker flips a bit in every copy of marker in the file at path (the
// object's state and its history events), as a failing disk would.
func flipMarker(t *testing.T, path, marker string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := bytes.Count(data, []byte(marker))
	if n == 0 {
		t.Fatalf("%q not in %s", marker, path)
	}
	data = bytes.ReplaceAll(data, []byte(marker), []byte(strings.ToLower(marker[:1])+marker[1:]))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

var checksumText = regexp.MustCompile(`stored [0-9a-f]{8}, computed [0-9a-f]{8}`)

// TestDamagedValueIsCorruptObject: bytes of a stored object damaged while
// the server was stopped fail their checksum at the next start; the
// object is then the corrupt object of a failed read, on get and list,
// never its broken JSON, and a delete with
// ignoreStoreReadErrorWithClusterBreakingPotential removes it.
func TestDamagedValueIsCorruptObject(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir, withUnsafeDelete))
	base := "/api/v1/namespaces/default/configmaps"
	r := e.do("POST", base, map[string]any{"metadata": map[string]any{"name": "damaged"}, "data": map[string]any{"k": "Payload-To-Damage"}}).mustCode(t, 201)
	rv := path(r.obj(t), "metadata.resourceVersion").(string)
	e.do("POST", base, map[string]any{"metadata": map[string]any{"name": "fine"}}).mustCode(t, 201)
	e.stop()
	flipMarker(t, e.opts.DBPath(), "Payload-To-Damage")

	e = startWith(t, testOptions(t, dir, withUnsafeDelete))
	msg := `StorageError: corrupt object, Code: 7, Key: /registry/configmaps/default/damaged, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=` +
		rv + `: bolt: checksum mismatch: stored X, computed Y`
	get := e.do("GET", base+"/damaged", nil)
	get.body = checksumText.ReplaceAll(get.body, []byte("stored X, computed Y"))
	wantBody(t, "GET", get, 500, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: `+msg+
		`","reason":"InternalError","details":{"causes":[{"message":"`+msg+`"}]},"code":500}`)
	if ct := get.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q", ct)
	}
	list := e.do("GET", base, nil)
	list.body = checksumText.ReplaceAll(list.body, []byte("stored X, computed Y"))
	wantBody(t, "LIST", list, 500, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"failed to read one or more configmaps from the storage","reason":"StorageReadError","details":{"name":"list","kind":"configmaps","causes":[{"reason":"UnexpectedServerResponse","message":"`+
		msg+`","field":"/registry/configmaps/default/damaged"}]},"code":500}`)
	e.do("GET", base+"/fine", nil).mustCode(t, 200)
	// The damaged history is dropped: the state before the damaged write
	// is compacted away.
	n, _ := strconv.ParseInt(rv, 10, 64)
	old := e.do("GET", "/api/v1/namespaces/default/secrets?resourceVersionMatch=Exact&resourceVersion="+strconv.FormatInt(n-1, 10), nil).mustCode(t, 410)
	if !strings.Contains(string(old.body), `"reason":"Expired"`) {
		t.Errorf("list before the damaged write: %s", old.body)
	}

	e.do("DELETE", base+"/damaged?ignoreStoreReadErrorWithClusterBreakingPotential=true", nil).mustCode(t, 200)
	e.do("GET", base+"/damaged", nil).mustCode(t, 404)
	if items := e.do("GET", base, nil).mustCode(t, 200).obj(t)["items"].([]any); len(items) != 1 {
		t.Errorf("list after the delete: %v", items)
	}
	e.do("POST", base, map[string]any{"metadata": map[string]any{"name": "damaged"}}).mustCode(t, 201)
	// The damage stays gone across a restart.
	e.stop()
	e = startWith(t, testOptions(t, dir, withUnsafeDelete))
	e.do("GET", base+"/damaged", nil).mustCode(t, 200)
}

// TestDamagedFileRefusedAtStart: a data file cut short stops the start
// with a message naming the file, the damage and the ways out, and never
// asks whether another platd runs.
func TestDamagedFileRefusedAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir))
	e.do("POST", "/api/v1/namespaces/default/configmaps", map[string]any{"metadata": map[string]any{"name": "cm"}}).mustCode(t, 201)
	e.stop()
	fi, err := os.Stat(e.opts.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(e.opts.DBPath(), fi.Size()/8); err != nil {
		t.Fatal(err)
	}
	_, err = server.New(context.Background(), testOptions(t, dir), quietLog())
	if err == nil {
		t.Fatal("a truncated data file started")
	}
	for _, want := range []string{"opening " + e.opts.DBPath() + ": the data file is damaged: ", "the file is truncated: it is ",
		"restore the data directory from a backup, or run `platd check --data-dir " + dir + "` to list the damaged keys and problems"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "another platd") {
		t.Errorf("error %q blames another platd", err)
	}
}

// TestLockedDataDirectory: a second server on a data directory in use
// says so.
func TestLockedDataDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir))
	_, err := server.New(context.Background(), testOptions(t, dir), quietLog())
	if err == nil || !strings.Contains(err.Error(), "is in use by another process: "+e.opts.DBPath()+" (is another platd using this data directory?)") {
		t.Fatalf("second server: %v", err)
	}
	e.do("GET", "/api/v1/namespaces/default", nil).mustCode(t, 200)
}

// TestOpenErrorSaysWhatItIs: a data file platd cannot open for another
// reason than a lock or damage says that reason, not the lock question.
func TestOpenErrorSaysWhatItIs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o := testOptions(t, dir)
	if err := os.MkdirAll(o.DBPath(), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := server.New(context.Background(), o, quietLog())
	if err == nil || !strings.Contains(err.Error(), "opening "+o.DBPath()+": bolt: open "+o.DBPath()+": "+o.DBPath()+" is not a regular file (d") ||
		strings.Contains(err.Error(), "another platd") {
		t.Fatalf("start on a directory: %v", err)
	}
}
