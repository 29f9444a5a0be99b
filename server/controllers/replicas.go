package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"platd/bolt"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
)

// Identity lease timings, upstream's: a replica renews its identity lease
// every 10 s; the lease itself lasts an hour (identity leases are also a
// record of which servers ran); the API's endpoints list a replica only
// while its renewal is at most 15 s old (upstream's endpoint reconciler
// TTL).
const (
	DefaultIdentityRenewInterval = 10 * time.Second
	IdentityLeaseDuration        = time.Hour
	DefaultEndpointTTL           = 15 * time.Second
)

// IdentityLeaseName is the name of a server's identity lease, as upstream
// derives it: "apiserver-" and the first 16 bytes of the SHA-256 of the
// length-prefixed host name and component, in lower-case unpadded base32.
// Two servers on one host share it, as upstream's do.
func IdentityLeaseName(hostname, component string) string {
	var b []byte
	for _, s := range []string{hostname, component} {
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
		b = append(b, s...)
	}
	sum := sha256.Sum256(b)
	return "apiserver-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}

// Identity keeps one replica's identity Lease in the system namespace
// renewed, so the other replicas know it is alive and where it serves.
type Identity struct {
	Objects Objects
	Leases  *registry.Descriptor
	// Namespace and Name place the lease; Holder is its holderIdentity
	// (upstream's "<name>_<uuid>", new at every start).
	Namespace, Name, Holder string
	// Labels and Annotations are written into the lease at every renewal:
	// the identity label, the host name, the peer address.
	Labels, Annotations map[string]any
	// Renew is the renewal period; zero means the default.
	Renew time.Duration
	Log   *slog.Logger
}

// Run renews the lease until ctx ends, then deletes it so the leader drops
// this replica from the API's endpoints at once (as upstream's endpoint
// reconciler removes its own record when a server stops).
func (i *Identity) Run(ctx context.Context) {
	t := time.NewTicker(orDefault(i.Renew, DefaultIdentityRenewInterval))
	defer t.Stop()
	for {
		if err := i.renew(ctx); err != nil && ctx.Err() == nil {
			i.Log.Warn("renewing the identity lease", "lease", i.Namespace+"/"+i.Name, "err", err)
		}
		select {
		case <-ctx.Done():
			i.remove()
			return
		case <-t.C:
		}
	}
}

func (i *Identity) renew(ctx context.Context) error {
	stamp := time.Now().UTC().Format(microTime)
	set := func(obj registry.Object) {
		meta, spec := child(obj, "metadata"), child(obj, "spec")
		for _, f := range []struct {
			key  string
			want map[string]any
		}{{"labels", i.Labels}, {"annotations", i.Annotations}} {
			m := child(meta, f.key)
			for k, v := range f.want {
				m[k] = v
			}
		}
		spec["holderIdentity"] = i.Holder
		spec["leaseDurationSeconds"] = seconds(IdentityLeaseDuration)
		spec["renewTime"] = stamp
	}
	_, err := i.Objects.Update(ctx, i.Leases, i.Namespace, i.Name, "", func(old registry.Object) registry.Object {
		set(old)
		return old
	})
	if apierr.ReasonOf(err) != apierr.ReasonNotFound {
		return err
	}
	obj := registry.Object{"metadata": map[string]any{"name": i.Name, "namespace": i.Namespace}, "spec": map[string]any{"acquireTime": stamp}}
	set(obj)
	_, err = i.Objects.Create(ctx, i.Leases, obj)
	if apierr.ReasonOf(err) == apierr.ReasonAlreadyExists {
		return nil // the next renewal updates it
	}
	return err
}

// remove deletes the lease if it is still this start's.
func (i *Identity) remove() {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultRenewDeadline)
	defer cancel()
	cur, err := i.Objects.Get(i.Leases, i.Namespace, i.Name)
	if err != nil || child(cur, "spec")["holderIdentity"] != i.Holder {
		return
	}
	if _, err := i.Objects.Delete(ctx, i.Leases, i.Namespace, i.Name, registry.DeleteOptions{PreconditionUID: metaString(cur, "uid")}); err != nil &&
		apierr.ReasonOf(err) != apierr.ReasonNotFound {
		i.Log.Warn("deleting the identity lease", "lease", i.Namespace+"/"+i.Name, "err", err)
	}
}

// APIServerEndpoints keeps the API's Endpoints and EndpointSlice listing
// every live replica: those whose identity lease was renewed within TTL.
// It runs on the leader only. Addresses are listed in address order, so
// the objects change only when the set of replicas does.
type APIServerEndpoints struct {
	Source  Source
	Objects Objects
	Leases  *registry.Descriptor
	// Namespace holds the identity leases; Label and Component select
	// them (label Label has value Component); AddressAnnotation holds a
	// replica's "ip:port".
	Namespace, Label, Component, AddressAnnotation string
	// TTL is how old a renewal may be; zero means the default.
	TTL time.Duration
	// Wanted builds the Endpoints and EndpointSlice for the live
	// addresses.
	Wanted func(addrs []netip.Addr) []Wanted
	Log    *slog.Logger

	mu      sync.Mutex
	records map[string]*replicaRecord
	wake    chan struct{}
}

// replicaRecord is what the reconciler knows of one identity lease.
type replicaRecord struct {
	// addr is where the replica serves; invalid when its lease names no
	// address (it is then not listed).
	addr netip.Addr
	rv   string
	uid  string
	// seen is when the lease last changed, on this replica's clock (a
	// lease first seen counts from its renewTime when that is earlier, so
	// a replica long gone is not listed for a TTL after a new leader
	// starts).
	seen time.Time
	// duration is the lease's own: once it has passed since seen, the
	// lease is deleted, as upstream's identity lease collector does.
	duration time.Duration
}

// Run keeps the objects until ctx ends.
func (c *APIServerEndpoints) Run(ctx context.Context) {
	c.records = map[string]*replicaRecord{}
	c.wake = make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		follow(ctx, c.Source, c.Leases.Prefix(c.Namespace), c.Log, func(kvs []bolt.KV) {
			c.mu.Lock()
			clear(c.records)
			c.mu.Unlock()
			for _, kv := range kvs {
				c.observe(kv.Key, kv.Value, false)
			}
			c.poke()
		}, func(ev bolt.Event) {
			c.observe(ev.KV.Key, ev.KV.Value, ev.Type == bolt.Delete)
			c.poke()
		})
	}()
	c.reconcile(ctx)
	wg.Wait()
}

func (c *APIServerEndpoints) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// observe records one identity lease, or forgets a deleted one.
func (c *APIServerEndpoints) observe(key string, value []byte, deleted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if deleted {
		delete(c.records, key)
		return
	}
	obj, err := schema.DecodeStored(value, c.Leases.Schema)
	if err != nil {
		c.Log.Warn("decoding an identity lease", "key", key, "err", err)
		return
	}
	meta := child(obj, "metadata")
	if child(meta, "labels")[c.Label] != c.Component {
		delete(c.records, key)
		return
	}
	var addr netip.Addr
	if ap, err := netip.ParseAddrPort(str(child(meta, "annotations"), c.AddressAnnotation)); err == nil {
		addr = ap.Addr().Unmap()
	}
	spec := child(obj, "spec")
	rv, uid, now := metaString(obj, "resourceVersion"), metaString(obj, "uid"), time.Now()
	dur := time.Duration(registry.Int64(spec["leaseDurationSeconds"])) * time.Second
	r := c.records[key]
	switch {
	case r == nil:
		seen := now
		if t, err := time.Parse(microTime, str(spec, "renewTime")); err == nil && t.Before(now) {
			seen = t
		}
		c.records[key] = &replicaRecord{addr: addr, rv: rv, uid: uid, seen: seen, duration: dur}
	case r.rv != rv:
		r.addr, r.rv, r.uid, r.seen, r.duration = addr, rv, uid, now, dur
	}
}

// live returns the addresses of the fresh records in order, the keys of
// the expired leases, and when the next record goes stale or expires
// (zero when none will).
func (c *APIServerEndpoints) live(now time.Time) (addrs []netip.Addr, expired []string, next time.Time) {
	ttl := orDefault(c.TTL, DefaultEndpointTTL)
	c.mu.Lock()
	defer c.mu.Unlock()
	soonest := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for key, r := range c.records {
		if r.duration > 0 {
			if end := r.seen.Add(r.duration); now.Before(end) {
				soonest(end)
			} else {
				expired = append(expired, key)
			}
		}
		end := r.seen.Add(ttl)
		if !now.Before(end) || !r.addr.IsValid() {
			continue
		}
		if !slices.Contains(addrs, r.addr) {
			addrs = append(addrs, r.addr)
		}
		soonest(end)
	}
	slices.SortFunc(addrs, netip.Addr.Compare)
	return addrs, expired, next
}

// collect deletes an expired identity lease unless it changed meanwhile.
func (c *APIServerEndpoints) collect(ctx context.Context, key string) {
	c.mu.Lock()
	r := c.records[key]
	c.mu.Unlock()
	_, name, ok := c.Leases.SplitKey(key)
	if r == nil || !ok {
		return
	}
	cur, err := c.Objects.Get(c.Leases, c.Namespace, name)
	if err != nil || metaString(cur, "resourceVersion") != r.rv {
		return // gone, or renewed: its event says so
	}
	_, err = c.Objects.Delete(ctx, c.Leases, c.Namespace, name, registry.DeleteOptions{PreconditionUID: r.uid})
	if err != nil && apierr.ReasonOf(err) != apierr.ReasonNotFound && ctx.Err() == nil {
		c.Log.Warn("deleting an expired identity lease", "lease", c.Namespace+"/"+name, "err", err)
		return
	}
	c.Log.Info("expired identity lease deleted", "lease", c.Namespace+"/"+name)
	c.mu.Lock()
	if c.records[key] == r {
		delete(c.records, key)
	}
	c.mu.Unlock()
}

// reconcile writes the objects whenever the live set changes, and keeps
// them (a Kept) until it changes again.
func (c *APIServerEndpoints) reconcile(ctx context.Context) {
	var cur []netip.Addr
	var stop context.CancelFunc = func() {}
	var kept sync.WaitGroup
	defer func() {
		stop()
		kept.Wait()
	}()
	started := false
	for {
		addrs, expired, next := c.live(time.Now())
		for _, key := range expired {
			c.collect(ctx, key)
		}
		// With no record yet (the leases are still being listed) the
		// objects are left as they are.
		if len(addrs) > 0 && (!started || !slices.Equal(addrs, cur)) {
			stop()
			kept.Wait()
			cur, started = addrs, true
			k := &Kept{Source: c.Source, Objects: c.Objects, Wanted: c.Wanted(addrs), Log: c.Log}
			kctx, cancel := context.WithCancel(ctx)
			stop = cancel
			kept.Add(1)
			go func() {
				defer kept.Done()
				k.Run(kctx)
			}()
			c.Log.Info("API server endpoints", "addresses", addrs)
		}
		var timer <-chan time.Time
		t := time.NewTimer(time.Until(next))
		if !next.IsZero() {
			timer = t.C
		}
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-c.wake:
		case <-timer:
		}
		t.Stop()
	}
}
