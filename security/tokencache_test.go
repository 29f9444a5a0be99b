package security

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// blockingToken accepts every token once released, counting calls and
// recording whether its context was cancelled by then.
type blockingToken struct {
	entered  chan struct{}
	release  chan struct{}
	calls    atomic.Int32
	canceled atomic.Bool
}

func (b *blockingToken) AuthenticateToken(ctx context.Context, token string) (*User, bool, error) {
	if b.calls.Add(1) == 1 {
		close(b.entered)
	}
	<-b.release
	b.canceled.Store(ctx.Err() != nil)
	return &User{Name: "u-" + token}, true, nil
}

func TestTokenCacheSharesLookups(t *testing.T) {
	t.Parallel()
	b := &blockingToken{entered: make(chan struct{}), release: make(chan struct{})}
	c := newTokenCache(b, time.Minute, time.Minute, time.Now)
	firstCtx, cancelFirst := context.WithCancel(context.Background())
	firstDone := make(chan error, 1)
	go func() {
		_, _, err := c.AuthenticateToken(firstCtx, "t")
		firstDone <- err
	}()
	<-b.entered
	var wg sync.WaitGroup
	names := make([]string, 8)
	for i := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if u, ok, err := c.AuthenticateToken(context.Background(), "t"); ok && err == nil {
				names[i] = u.Name
			}
		}()
	}
	// The first caller goes away; the lookup it started goes on for the
	// others.
	cancelFirst()
	close(b.release)
	wg.Wait()
	<-firstDone
	if n := b.calls.Load(); n != 1 {
		t.Errorf("%d lookups for one token", n)
	}
	if b.canceled.Load() {
		t.Errorf("the shared lookup saw the first caller's cancellation")
	}
	for i, n := range names {
		if n != "u-t" {
			t.Errorf("caller %d got %q", i, n)
		}
	}
}
