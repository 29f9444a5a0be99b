package rest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"platd/bolt"
	"platd/server/apierr"
)

// failingStore answers every read, write and watch with err.
type failingStore struct {
	Storage
	err error
}

func (f failingStore) Get(string) (bolt.KV, error) { return bolt.KV{}, f.err }
func (f failingStore) List(string, bolt.ListOptions) (bolt.ListResult, error) {
	return bolt.ListResult{}, f.err
}
func (f failingStore) Create(context.Context, string, []byte) (bolt.KV, error) {
	return bolt.KV{}, f.err
}
func (f failingStore) Update(context.Context, string, int64, []byte) (bolt.KV, error) {
	return bolt.KV{}, f.err
}
func (f failingStore) Delete(context.Context, string, int64) (bolt.KV, error) {
	return bolt.KV{}, f.err
}
func (f failingStore) Txn(context.Context, []bolt.Op) ([]bolt.KV, error) { return nil, f.err }
func (f failingStore) Watch(context.Context, string, int64) (bolt.Watcher, error) {
	return nil, f.err
}

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// An engine error without a Status of its own reaches the client as a
// generic 500; its text, which names engine internals, goes to the log.
func TestUnknownStorageErrorIsGeneric(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	h, srv, _ := newTestHandler(t, Config{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	const secret = "revision -1 at page 4711 of /data/platd.db"
	for _, cause := range []error{
		fmt.Errorf("%w: %s", bolt.ErrInvalid, secret),
		fmt.Errorf("%w: %s", bolt.ErrInvalidTxn, secret),
		&bolt.OpError{Index: 0, Key: "/configmaps/default/x", Err: fmt.Errorf("%w: %s", bolt.ErrInvalid, secret)},
	} {
		h.store = failingStore{Storage: h.store, err: cause}
		const want = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: the storage operation failed; the server log has the cause","reason":"InternalError","details":{"causes":[{"message":"the storage operation failed; the server log has the cause"}]},"code":500}`
		base := srv.URL + "/api/v1/namespaces/default/configmaps"
		for _, rq := range []struct{ method, url, body string }{
			{"GET", base + "/x", ""},
			{"GET", base, ""},
			{"GET", base + "?limit=1&resourceVersion=1", ""},
			{"GET", base + "?resourceVersion=1&resourceVersionMatch=Exact", ""},
			{"GET", base + "?watch=1&resourceVersion=1", ""},
			{"POST", base, `{"metadata":{"name":"x"}}`},
			{"PUT", base + "/x", `{"metadata":{"name":"x"}}`},
			{"PATCH", base + "/x", `{"data":{"a":"b"}}`},
			{"DELETE", base + "/x", ""},
			{"DELETE", base, ""},
		} {
			req, _ := http.NewRequest(rq.method, rq.url, strings.NewReader(rq.body))
			req.Header.Set("Content-Type", "application/json")
			if rq.method == "PATCH" {
				req.Header.Set("Content-Type", "application/merge-patch+json")
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 500 || strings.TrimSpace(string(b)) != want {
				t.Errorf("%v: %s %s: %d %s", cause, rq.method, rq.url, res.StatusCode, b)
			}
		}
	}
	if !strings.Contains(logs.String(), secret) || !strings.Contains(logs.String(), "storage failure") {
		t.Errorf("the cause was not logged: %s", logs.String())
	}
}

// toStatus keeps what already is a Status and turns engine errors that
// lost their context into the generic 500.
func TestToStatusEngineErrors(t *testing.T) {
	h := &Handler{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, err := range []error{
		bolt.ErrInvalid,
		fmt.Errorf("writing /x with its claims: %w", &bolt.OpError{Index: 2, Key: "/claims/x", Err: bolt.ErrInvalidTxn}),
		fmt.Errorf("wrapped: %w", bolt.ErrCorrupt),
		fmt.Errorf("%w: commit: %w", bolt.ErrIO, &os.PathError{Op: "write", Path: "/data/platd.db", Err: errors.New("no space left on device")}),
	} {
		st := apierr.FromError(h.toStatus(err)).Status
		if st.Code != 500 || st.Reason != apierr.ReasonInternalError || strings.Contains(st.Message, "bolt") || strings.Contains(st.Message, "/data") {
			t.Errorf("%v: %d %s %q", err, st.Code, st.Reason, st.Message)
		}
	}
	if st := apierr.FromError(h.toStatus(fmt.Errorf("x: %w", bolt.ErrClosed))).Status; st.Code != 503 || st.Message != "apiserver is shutting down" {
		t.Errorf("closed engine: %+v", st)
	}
	// Statuses and the upstream's unwrapped non-storage errors pass.
	nf := apierr.NotFound("", "configmaps", "x")
	if got := h.toStatus(nf); got != nf {
		t.Errorf("Status changed: %v", got)
	}
	raw := fmt.Errorf(`resourceVersion: Invalid value: "x": invalid syntax`)
	if got := h.toStatus(raw); got != raw {
		t.Errorf("raw error changed: %v", got)
	}
}

// Every sentinel bolt/errors.go declares is known to engineError, so a new
// one cannot slip through toStatus with its text.
func TestEngineSentinelsComplete(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../../bolt/errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, s := range engineSentinels {
		known[s.Error()] = true
	}
	n := 0
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				call, ok := vs.Values[i].(*ast.CallExpr)
				if !ok || !strings.HasPrefix(name.Name, "Err") || len(call.Args) != 1 {
					continue
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok {
					continue
				}
				n++
				text, _ := strconv.Unquote(lit.Value)
				if !known[text] {
					t.Errorf("bolt.%s (%q) is missing from engineSentinels", name.Name, text)
				}
			}
		}
	}
	if n != len(engineSentinels) {
		t.Errorf("bolt declares %d sentinels, engineSentinels holds %d", n, len(engineSentinels))
	}
}
