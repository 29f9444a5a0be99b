package rest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"platd/server/registry"
	"platd/server/schema"
)

// countingConverter converts between versions of group g by rewriting
// apiVersion, counting its calls; it fails while fail is set.
type countingConverter struct {
	s     *schema.Schema
	calls atomic.Int32
	fail  atomic.Bool
	// gate, when set, holds each conversion until it is closed.
	gate chan struct{}
}

func (c *countingConverter) Schema(string) *schema.Schema { return c.s }
func (c *countingConverter) Convert(_ context.Context, obj registry.Object, gv string) (registry.Object, error) {
	c.calls.Add(1)
	if c.gate != nil {
		<-c.gate
	}
	if c.fail.Load() {
		return nil, errors.New("cannot convert")
	}
	obj["apiVersion"] = gv
	return obj, nil
}
func (c *countingConverter) ConvertList(ctx context.Context, items []registry.Object, gv string) ([]registry.Object, error) {
	for i := range items {
		if _, err := c.Convert(ctx, items[i], gv); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// versionedDescriptors are versions v1 (stored) and v2 of one type
// converted by cv.
func versionedDescriptors(cv *countingConverter) (v1, v2 *registry.Descriptor) {
	str := &schema.Schema{Type: schema.String}
	meta := &schema.Schema{Type: schema.Object, Fields: []*schema.Field{
		{Name: "name", Schema: str, OmitEmpty: true},
		{Name: "resourceVersion", Schema: str, OmitEmpty: true},
	}}
	s := &schema.Schema{Type: schema.Object, Fields: []*schema.Field{
		{Name: "metadata", Schema: meta, OmitEmpty: true},
		{Name: "spec", Schema: str, OmitEmpty: true},
	}}
	s.Seal()
	cv.s = s
	v1 = &registry.Descriptor{Group: "g", Version: "v1", Kind: "K", Schema: s}
	v1.Storage = &registry.Storage{Descriptor: v1, Converter: cv}
	v2 = &registry.Descriptor{Group: "g", Version: "v2", Kind: "K", Schema: s, Storage: v1.Storage}
	return v1, v2
}

// TestConversionCacheShares checks that the states of watch events are
// converted once for all the watchers that ask, together or in turn,
// that states already in the version asked are not converted, and that a
// failure is given to whoever waited for it but not kept.
func TestConversionCacheShares(t *testing.T) {
	t.Parallel()
	cv := &countingConverter{gate: make(chan struct{})}
	_, v2 := versionedDescriptors(cv)
	c := newConversionCache()
	stored := []byte(`{"metadata":{"name":"a","resourceVersion":"5"},"spec":"x","apiVersion":"g/v1"}`)
	const watchers = 8
	var wg sync.WaitGroup
	got := make([][]byte, watchers)
	for i := range watchers {
		wg.Go(func() {
			b, err := c.inVersion(v2, "/k/a", 5, stored)
			if err != nil {
				t.Error(err)
			}
			got[i] = b
		})
	}
	// The first watcher converts, held at the gate; the others wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for cv.calls.Load() == 0 {
		if time.Now().After(deadline) {
			close(cv.gate)
			t.Fatal("no conversion started within 10s")
		}
		runtime.Gosched()
	}
	close(cv.gate)
	wg.Wait()
	want := `{"metadata":{"name":"a","resourceVersion":"5"},"spec":"x","apiVersion":"g/v2"}`
	for i, b := range got {
		if string(b) != want {
			t.Errorf("watcher %d: %s, want %s", i, b, want)
		}
	}
	if _, err := c.inVersion(v2, "/k/a", 5, stored); err != nil || cv.calls.Load() != 1 {
		t.Errorf("%d conversions of one state, want 1 (%v)", cv.calls.Load(), err)
	}
	if b, err := c.inVersion(v2, "/k/a", 6, []byte(want)); err != nil || string(b) != want || cv.calls.Load() != 1 {
		t.Errorf("a state in the version asked: %s %v, %d conversions", b, err, cv.calls.Load())
	}
	cv.fail.Store(true)
	for range 2 {
		if _, err := c.inVersion(v2, "/k/b", 7, stored); err == nil {
			t.Error("a failed conversion succeeded")
		}
	}
	if n := cv.calls.Load(); n != 3 {
		t.Errorf("failures were kept: %d conversions, want 3", n)
	}
}

// TestConversionCacheBounds checks that the cache keeps at most
// conversionCacheSize states and conversionCacheBytes in all.
func TestConversionCacheBounds(t *testing.T) {
	t.Parallel()
	cv := &countingConverter{}
	_, v2 := versionedDescriptors(cv)
	c := newConversionCache()
	big := strings.Repeat("x", conversionCacheBytes/8)
	for i := range conversionCacheSize + 10 {
		spec := "x"
		if i%1000 == 0 {
			spec = big
		}
		stored := fmt.Appendf(nil, `{"metadata":{"name":"a%d","resourceVersion":"%d"},"spec":%q,"apiVersion":"g/v1"}`, i, i+1, spec)
		if _, err := c.inVersion(v2, fmt.Sprintf("/k/a%d", i), int64(i+1), stored); err != nil {
			t.Fatal(err)
		}
		checkBoundedCache(t, &c.kept, fmt.Sprintf("after %d", i+1))
		if len(c.kept.entries) != c.kept.n {
			t.Fatalf("after %d: %d slots, %d entries", i+1, c.kept.n, len(c.kept.entries))
		}
	}
	for k, e := range c.kept.entries {
		if e.size != len(e.value.value) {
			t.Errorf("%v charged %d bytes, holds %d", k, e.size, len(e.value.value))
		}
	}
}

// TestConversionCacheDroppedWhileConverting checks that a conversion
// pushed out of the cache while it runs is still returned to its caller,
// is not charged, and is made again for a later reader.
func TestConversionCacheDroppedWhileConverting(t *testing.T) {
	t.Parallel()
	cv := &countingConverter{gate: make(chan struct{})}
	_, v2 := versionedDescriptors(cv)
	c := newConversionCache()
	stored := []byte(`{"metadata":{"name":"a","resourceVersion":"5"},"spec":"x","apiVersion":"g/v1"}`)
	want := `{"metadata":{"name":"a","resourceVersion":"5"},"spec":"x","apiVersion":"g/v2"}`
	got := make(chan []byte, 1)
	go func() {
		b, err := c.inVersion(v2, "/k/a", 5, stored)
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	deadline := time.Now().Add(10 * time.Second)
	for cv.calls.Load() == 0 {
		if time.Now().After(deadline) {
			close(cv.gate)
			t.Fatal("no conversion started within 10s")
		}
		runtime.Gosched()
	}
	// Newer states, already converted, take every slot.
	done := make(chan struct{})
	close(done)
	for i := range conversionCacheSize {
		c.kept.add(conversionKey{d: v2, key: fmt.Sprintf("/k/b%d", i), rev: 6}, &conversion{done: done, value: []byte("{}")}, 2)
	}
	close(cv.gate)
	if b := <-got; string(b) != want {
		t.Fatalf("the caller got %s, want %s", b, want)
	}
	if _, ok := c.kept.get(conversionKey{d: v2, key: "/k/a", rev: 5}); ok {
		t.Fatal("a dropped conversion is kept")
	}
	checkBoundedCache(t, &c.kept, "after the dropped conversion")
	if c.kept.bytes != 2*conversionCacheSize {
		t.Fatalf("%d bytes counted, want %d", c.kept.bytes, 2*conversionCacheSize)
	}
	if b, err := c.inVersion(v2, "/k/a", 5, stored); err != nil || string(b) != want || cv.calls.Load() != 2 {
		t.Fatalf("read again: %s %v after %d conversions, want 2", b, err, cv.calls.Load())
	}
}
