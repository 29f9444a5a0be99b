package codec

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

type event struct {
	typ    string
	object []byte
}

// protobufEvents splits a captured protobuf watch stream into events.
func protobufEvents(t *testing.T, stream []byte) []event {
	t.Helper()
	var out []event
	for len(stream) > 0 {
		n := binary.BigEndian.Uint32(stream)
		msg := stream[frameLengthSize : frameLengthSize+n]
		stream = stream[frameLengthSize+n:]
		var ev event
		err := walkFields(msg, 2, func(num protowire.Number, v []byte) error {
			switch num {
			case 1:
				ev.typ = string(v)
			case 2:
				return walkFields(v, 1, func(_ protowire.Number, raw []byte) error {
					ev.object = raw
					return nil
				})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

func TestProtobufWatchGolden(t *testing.T) {
	t.Parallel()
	stream := readTestdata(t, "watch-protobuf.bin")
	events := protobufEvents(t, stream)
	if len(events) != 3 || events[0].typ != EventAdded || events[1].typ != EventModified || events[2].typ != EventDeleted {
		t.Fatalf("decoded %d events: %+v", len(events), events)
	}
	for _, ev := range events {
		if _, kind, _, err := UnwrapProtobuf(ev.object); err != nil || kind != "ConfigMap" {
			t.Fatalf("embedded object: kind %q, %v", kind, err)
		}
	}
	var out bytes.Buffer
	enc := NewProtobufFrameWriter(&out)
	for _, ev := range events {
		if err := enc.Encode(ev.typ, ev.object); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out.Bytes(), stream) {
		t.Fatalf("re-encoded stream differs\n got %x\nwant %x", out.Bytes(), stream)
	}
}

func TestJSONWatchGolden(t *testing.T) {
	t.Parallel()
	stream := readTestdata(t, "watch.jsonl")
	var out bytes.Buffer
	enc := NewJSONFrameWriter(&out)
	sc := bufio.NewScanner(bytes.NewReader(stream))
	n := 0
	for sc.Scan() {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(ev.Type, ev.Object); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("read %d events", n)
	}
	if !bytes.Equal(out.Bytes(), stream) {
		t.Fatalf("re-encoded stream differs\n got %s\nwant %s", out.Bytes(), stream)
	}
}

// BenchmarkWatchEncode reports allocations per event, which should be 0
// once the encoder's buffer has grown.
func BenchmarkWatchEncode(b *testing.B) {
	object := bytes.TrimSpace(readTestdata(b, "configmap.json"))
	envelope := readTestdata(b, "configmap.pb")
	for name, tc := range map[string]struct {
		enc    *WatchEncoder
		object []byte
	}{
		"json":     {NewJSONFrameWriter(discard{}), object},
		"protobuf": {NewProtobufFrameWriter(discard{}), envelope},
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.object)))
			b.ReportAllocs()
			for b.Loop() {
				if err := tc.enc.Encode(EventModified, tc.object); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestWatchEncodeWriteError(t *testing.T) {
	t.Parallel()
	if err := NewJSONFrameWriter(failingWriter{}).Encode(EventAdded, []byte(`{}`)); err == nil || err.Error() != "broken pipe" {
		t.Fatalf("err = %v", err)
	}
}

// wrappedWriter hides the Flusher of the writer it wraps, as middleware
// writers do, but unwraps to it.
type wrappedWriter struct{ http.ResponseWriter }

func (w wrappedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func TestWatchFlush(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		wrap    func(*httptest.ResponseRecorder) http.ResponseWriter
		flushed bool
	}{
		{"flusher", func(r *httptest.ResponseRecorder) http.ResponseWriter { return r }, true},
		{"unwrapping", func(r *httptest.ResponseRecorder) http.ResponseWriter { return wrappedWriter{r} }, true},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		enc := NewJSONFrameWriter(tt.wrap(rec))
		if err := enc.Encode(EventBookmark, []byte(`{"kind":"ConfigMap"}`)); err != nil {
			t.Fatal(err)
		}
		if err := enc.Flush(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if rec.Flushed != tt.flushed {
			t.Errorf("%s: flushed = %v", tt.name, rec.Flushed)
		}
		if got := rec.Body.String(); got != `{"type":"BOOKMARK","object":{"kind":"ConfigMap"}}`+"\n" {
			t.Errorf("%s: body %q", tt.name, got)
		}
	}
	if err := NewJSONFrameWriter(&bytes.Buffer{}).Flush(); err != nil {
		t.Fatalf("non-flushing writer: %v", err)
	}
}

func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "ADDED", "a\"b\\c", "<a&b>", "\x00\x1f\b\f\n\r\t", "\u2028\u2029", "héllo", "bad\xffutf8", "\xed\xa0\x80"} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("a\"<\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}
