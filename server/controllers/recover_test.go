package controllers

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"platd/bolt"
	"platd/security"
	"platd/security/rbac"
	"platd/server/customresource"
	"platd/server/registry"
)

// racingSource is a Source whose next List of prefix runs write right
// after listing: a writer that gets ahead of a consumer between its list
// and its watch, as a loaded machine schedules them at start.
type racingSource struct {
	Source
	mu     sync.Mutex
	prefix string
	write  func()
	fired  bool
}

func (s *racingSource) arm(prefix string, write func()) {
	s.mu.Lock()
	s.prefix, s.write = prefix, write
	s.mu.Unlock()
}

func (s *racingSource) List(prefix string, opts bolt.ListOptions) (bolt.ListResult, error) {
	res, err := s.Source.List(prefix, opts)
	s.mu.Lock()
	var write func()
	if prefix == s.prefix && s.write != nil {
		write, s.write, s.fired = s.write, nil, true
	}
	s.mu.Unlock()
	if write != nil {
		write()
	}
	return res, err
}

func (s *racingSource) hasFired() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fired
}

// endingSource is a Source whose watches of prefix end with err after
// passing on at most after events, ends times; later watches run to the
// end. It counts the lists and watches of prefix.
type endingSource struct {
	Source
	prefix string
	err    error
	after  int

	mu             sync.Mutex
	ends           int
	lists, watches int
}

func (s *endingSource) List(prefix string, opts bolt.ListOptions) (bolt.ListResult, error) {
	if prefix == s.prefix {
		s.mu.Lock()
		s.lists++
		s.mu.Unlock()
	}
	return s.Source.List(prefix, opts)
}

func (s *endingSource) Watch(ctx context.Context, prefix string, from int64) (bolt.Watcher, error) {
	w, err := s.Source.Watch(ctx, prefix, from)
	if err != nil || prefix != s.prefix {
		return w, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches++
	if s.ends == 0 {
		return w, nil
	}
	s.ends--
	return newEndingWatcher(w, s.after, s.err), nil
}

func (s *endingSource) counts() (lists, watches, ends int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists, s.watches, s.ends
}

// endingWatcher passes on the events of a real watcher until after of
// them went through, then ends with err as a dropped watch does.
type endingWatcher struct {
	bolt.Watcher
	out  chan bolt.Event
	stop chan struct{}
	done chan struct{}
	once sync.Once
	err  error
}

func newEndingWatcher(w bolt.Watcher, after int, err error) *endingWatcher {
	e := &endingWatcher{Watcher: w, out: make(chan bolt.Event), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(e.done)
		defer close(e.out)
		defer w.Stop()
		for n := 0; n < after; n++ {
			select {
			case ev, ok := <-w.Events():
				if !ok {
					return
				}
				select {
				case e.out <- ev:
				case <-e.stop:
					return
				}
			case <-e.stop:
				return
			}
		}
		e.err = err
	}()
	return e
}

func (e *endingWatcher) Events() <-chan bolt.Event { return e.out }

// Err is read after Events closed, when the goroutine set it.
func (e *endingWatcher) Err() error {
	select {
	case <-e.done:
		return e.err
	default:
		return nil
	}
}

func (e *endingWatcher) Stop() {
	e.once.Do(func() { close(e.stop) })
	<-e.done
}

// publicInfo is the part of the default policy that lets anyone read
// /readyz: a cluster role and its binding to the unauthenticated.
func publicInfo(g string) (role, binding registry.Object) {
	role = registry.Object{"metadata": map[string]any{"name": "system:public-info-viewer"},
		"rules": []any{map[string]any{"verbs": []any{"get"}, "nonResourceURLs": []any{"/readyz"}}}}
	binding = registry.Object{"metadata": map[string]any{"name": "system:public-info-viewer"},
		"roleRef":  map[string]any{"apiGroup": g, "kind": "ClusterRole", "name": "system:public-info-viewer"},
		"subjects": []any{map[string]any{"kind": "Group", "name": "system:unauthenticated", "apiGroup": g}}}
	return role, binding
}

var anonymousReadyz = security.Attributes{
	User: &security.User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}},
	Verb: "get", Path: "/readyz",
}

const readyzAllowed = `RBAC: allowed by ClusterRoleBinding "system:public-info-viewer" of ClusterRole "system:public-info-viewer" to Group "system:unauthenticated"`

func newRBAC(t *testing.T, e *testEnv, src Source) *RBAC {
	g := e.brand.Group("rbac.authorization")
	return &RBAC{Source: src, Authorizer: rbac.New(e.brand), Log: e.log,
		Roles: e.lookup(t, g, "v1", "roles"), ClusterRoles: e.lookup(t, g, "v1", "clusterroles"),
		RoleBindings: e.lookup(t, g, "v1", "rolebindings"), ClusterRoleBindings: e.lookup(t, g, "v1", "clusterrolebindings")}
}

func waitForReadyzAllowed(t *testing.T, c *RBAC) {
	t.Helper()
	var d security.Decision
	var reason string
	waitFor(t, "anonymous GET /readyz to be allowed", func() bool {
		d, reason, _ = c.Authorizer.Authorize(context.Background(), anonymousReadyz)
		return d == security.DecisionAllow && reason == readyzAllowed
	})
}

// A first start: the store is empty when the authorizer lists (revision
// 0), and the default policy lands before its watch opens. Watching "from
// revision 0" means from the current revision, so the policy was missed
// until the process ended; the watch must open before that list counts.
func TestRBACFirstStartPolicyWrittenBetweenListAndWatch(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	src := &racingSource{Source: e.store}
	c := newRBAC(t, e, src)
	if err := c.Load(); err != nil {
		t.Fatal(err)
	}
	if rev := e.store.Revision(); rev != 0 {
		t.Fatalf("store at revision %d, want an empty one", rev)
	}
	role, binding := publicInfo(e.brand.Group("rbac.authorization"))
	ctx := context.Background()
	src.arm(c.ClusterRoles.ResourcePrefix(), func() {
		if _, err := e.api.Create(ctx, c.ClusterRoles, role); err != nil {
			t.Error(err)
		}
		if _, err := e.api.Create(ctx, c.ClusterRoleBindings, binding); err != nil {
			t.Error(err)
		}
	})
	e.run(t, c.Run)
	waitFor(t, "the write between list and watch", src.hasFired)
	waitForReadyzAllowed(t, c)
}

// Every way a watch ends (dropped as too slow, history compacted, any
// other error) leaves the authorizer following the store: it resumes or
// lists again, and changes made meanwhile and after arrive.
func TestRBACRecoversAfterItsWatchEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		err    error
		relist bool
	}{
		{"too slow", bolt.ErrWatcherTooSlow, false},
		{"compacted", bolt.ErrCompacted, true},
		{"other", errors.New("connection reset"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			g := e.brand.Group("rbac.authorization")
			ctx := context.Background()
			ns := e.lookup(t, "", "v1", "namespaces")
			// Something stored, so that Load reads a real revision.
			if _, err := e.api.Create(ctx, ns, registry.Object{"metadata": map[string]any{"name": "ns1"}}); err != nil {
				t.Fatal(err)
			}
			cr := e.lookup(t, g, "v1", "clusterroles")
			// The cluster roles' watch ends after one event, twice.
			src := &endingSource{Source: e.store, prefix: cr.ResourcePrefix(), err: tc.err, after: 1, ends: 2}
			c := newRBAC(t, e, src)
			if err := c.Load(); err != nil {
				t.Fatal(err)
			}
			e.run(t, c.Run)
			role, binding := publicInfo(g)
			if _, err := e.api.Create(ctx, c.ClusterRoleBindings, binding); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"a", "b", "c"} {
				if _, err := e.api.Create(ctx, cr, registry.Object{"metadata": map[string]any{"name": name}}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := e.api.Create(ctx, cr, role); err != nil {
				t.Fatal(err)
			}
			waitForReadyzAllowed(t, c)
			// Still following: a delete after the restarts arrives.
			if _, err := e.api.Delete(ctx, cr, "", "system:public-info-viewer", registry.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the deleted cluster role to be missed", func() bool {
				d, reason, _ := c.Authorizer.Authorize(ctx, anonymousReadyz)
				return d == security.DecisionNoOpinion && reason == `RBAC: clusterrole.`+g+` "system:public-info-viewer" not found`
			})
			// Each ended watch passed on an event (the delete at the
			// latest), so both ends happen and a third watch opens.
			waitFor(t, "the third watch", func() bool {
				_, watches, ends := src.counts()
				return watches == 3 && ends == 0
			})
			// Load's list, then one per restart when the watch cannot resume.
			want := 1
			if tc.relist {
				want = 3
			}
			if lists, _, _ := src.counts(); lists != want {
				t.Errorf("lists %d, want %d", lists, want)
			}
		})
	}
}

// The shared follow loop, under every controller that keeps state from a
// watch (namespaces, garbage collection, aggregation, service account
// tokens, bootstrap tokens, kept objects...): a write between the list of
// an empty store and the watch arrives, and so does every write after the
// watch ended for any reason.
func TestFollowRecoversFromEveryWatchEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"too slow", bolt.ErrWatcherTooSlow},
		{"compacted", bolt.ErrCompacted},
		{"other", errors.New("connection reset")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			ctx := context.Background()
			put := func(key string) {
				if _, err := e.store.Create(ctx, key, []byte(`{"metadata":{"resourceVersion":""}}`)); err != nil {
					t.Error(err)
				}
			}
			racing := &racingSource{Source: e.store}
			racing.arm("/x/", func() { put("/x/between") })
			// The first watch is the one ListWatch opens before listing the
			// empty store again and then stops; the next two end early.
			src := &endingSource{Source: racing, prefix: "/x/", err: tc.err, after: 1, ends: 3}
			var mu sync.Mutex
			state := map[string]bool{}
			e.run(t, func(ctx context.Context) {
				follow(ctx, src, "/x/", e.log, func(kvs []bolt.KV) {
					mu.Lock()
					defer mu.Unlock()
					clear(state)
					for _, kv := range kvs {
						state[kv.Key] = true
					}
				}, func(ev bolt.Event) {
					mu.Lock()
					defer mu.Unlock()
					state[ev.KV.Key] = ev.Type != bolt.Delete
				})
			})
			has := func(keys ...string) func() bool {
				return func() bool {
					mu.Lock()
					defer mu.Unlock()
					n := 0
					for _, v := range state {
						if v {
							n++
						}
					}
					for _, k := range keys {
						if !state[k] {
							return false
						}
					}
					return n == len(keys)
				}
			}
			waitFor(t, "the write between list and watch", has("/x/between"))
			for _, k := range []string{"/x/a", "/x/b", "/x/c"} {
				put(k)
			}
			waitFor(t, "the writes across two ended watches", has("/x/between", "/x/a", "/x/b", "/x/c"))
			if _, err := e.store.Delete(ctx, "/x/a", 0); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "a delete after the restarts", has("/x/between", "/x/b", "/x/c"))
			waitFor(t, "the fourth watch", func() bool {
				_, watches, ends := src.counts()
				return watches == 4 && ends == 0
			})
		})
	}
}

// The Node authorizer's graph: pods written between the list of an empty
// store and the watch arrive, and the graph keeps following after its
// pod watch ended, however it ended.
func TestNodeGraphRecoversAfterItsWatchEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"too slow", bolt.ErrWatcherTooSlow},
		{"other", errors.New("connection reset")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			ctx := context.Background()
			pods := e.lookup(t, "", "v1", "pods")
			pod := func(name, secret string) {
				obj := registry.Object{"metadata": map[string]any{"name": name, "namespace": "ns"},
					"spec": map[string]any{"nodeName": "n1", "containers": []any{map[string]any{"name": "c", "image": "i"}},
						"volumes": []any{map[string]any{"name": "v", "secret": map[string]any{"secretName": secret}}}}}
				if _, err := e.api.Create(ctx, pods, obj); err != nil {
					t.Error(err)
				}
			}
			racing := &racingSource{Source: e.store}
			// The first watch is the one ListWatch opens before listing the
			// empty store again and then stops; the next two end early.
			src := &endingSource{Source: racing, prefix: pods.ResourcePrefix(), err: tc.err, after: 1, ends: 3}
			g := security.NewNodeGraph()
			c := &NodeGraph{Source: src, Graph: g, Pods: pods, Log: e.log}
			if err := c.Load(); err != nil {
				t.Fatal(err)
			}
			racing.arm(pods.ResourcePrefix(), func() {
				// Runs on the follower's goroutine: errors, never Fatal.
				if _, err := e.api.Create(ctx, e.reg.Namespaces(), registry.Object{"metadata": map[string]any{"name": "ns"}}); err != nil {
					t.Error(err)
				}
				if err := e.createDefaultAccount("ns"); err != nil {
					t.Error(err)
				}
				pod("p0", "s0")
			})
			e.run(t, c.Run)
			reaches := func(secret string) func() bool {
				return func() bool { return g.HasPath("n1", security.NodeSecret, "ns", secret) }
			}
			waitFor(t, "the pod written between list and watch", reaches("s0"))
			for _, name := range []string{"p1", "p2", "p3"} {
				pod(name, "s"+name[1:])
			}
			for _, s := range []string{"s1", "s2", "s3"} {
				waitFor(t, "secret "+s, reaches(s))
			}
			zero := int64(0)
			if _, err := e.api.Delete(ctx, pods, "ns", "p1", registry.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the deleted pod's secret to go", func() bool { return !reaches("s1")() })
			waitFor(t, "the fourth watch", func() bool {
				_, watches, ends := src.counts()
				return watches == 4 && ends == 0
			})
			if !reaches("s0")() || !reaches("s2")() || !reaches("s3")() {
				t.Error("the graph lost a pod it had")
			}
		})
	}
}

// The CRD registry: a definition written between the list of an empty
// store and the watch is served, and so are definitions written after
// its watch ended, however it ended.
func TestCRDsRecoverAfterTheirWatchEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"too slow", bolt.ErrWatcherTooSlow},
		{"other", errors.New("connection reset")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			ctx := context.Background()
			d := e.lookup(t, e.brand.Group("apiextensions"), "v1", "customresourcedefinitions")
			crd := func(plural string) {
				obj := registry.Object{"metadata": map[string]any{"name": plural + ".example.com"},
					"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
						"names": map[string]any{"plural": plural, "singular": plural[:len(plural)-1], "kind": "K" + plural[:len(plural)-1], "listKind": "K" + plural[:len(plural)-1] + "List"},
						"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
							"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}
				if _, err := e.api.Create(ctx, d, obj); err != nil {
					t.Error(err)
				}
			}
			racing := &racingSource{Source: e.store}
			src := &endingSource{Source: racing, prefix: d.ResourcePrefix(), err: tc.err, after: 1, ends: 3}
			c := &CRDs{Source: src, Objects: e.api, Registry: e.reg, Descriptor: d, Log: e.log,
				Builder: customresource.NewBuilder(d.Schema.Field("metadata").Schema, e.brand)}
			// As the server does: a created CRD is accepted and established.
			customresource.Attach(d, e.reg, c, e.brand)
			from, err := c.Load()
			if err != nil {
				t.Fatal(err)
			}
			// A CRD create waits for this controller to serve it, so the
			// write runs beside the list; the list returns once it is
			// committed.
			racing.arm(d.ResourcePrefix(), func() {
				before := e.store.Revision()
				go crd("zeros")
				deadline := time.Now().Add(10 * time.Second)
				for e.store.Revision() == before && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
			})
			e.run(t, func(ctx context.Context) { c.Run(ctx, from) })
			served := func(plural string) func() bool {
				return func() bool { return e.reg.Lookup("example.com", "v1", plural) != nil }
			}
			waitFor(t, "the CRD written between list and watch", served("zeros"))
			for _, p := range []string{"ones", "twos", "threes"} {
				crd(p)
			}
			for _, p := range []string{"ones", "twos", "threes"} {
				waitFor(t, p+" served", served(p))
			}
			// Before the fix of relist, a CRD the list brought in left its
			// create waiting in Await: crd above would not have returned.
			if _, watches, _ := src.counts(); watches < 3 {
				t.Errorf("watches %d, want the ended ones restarted", watches)
			}
		})
	}
}
