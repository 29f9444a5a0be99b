package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"platd/bolt"
	"platd/config"
	"platd/etcd"
	"platd/server/metrics"
)

// Batches of a copy: one page read from the source, one transaction
// written to the target. A transaction is also bounded in bytes, below
// etcd's default request limit (1.5 MiB), so that large objects are
// written in smaller transactions, or alone.
const (
	copyPageSize = 1000
	copyTxnBytes = 1 << 20
)

// eraseTimeout bounds the deletion of what a failed migration wrote into
// etcd: it runs also when the migration's context has ended (Ctrl-C).
const eraseTimeout = 30 * time.Second

// ErrTargetNotEmpty means a migration's target already holds objects: a
// copy into it would mix two clusters' objects.
var ErrTargetNotEmpty = errors.New("the target store is not empty")

// CopyResult is what a copy did.
type CopyResult struct {
	// Revision is the source's revision the copy read at.
	Revision int64
	// Objects is the number of objects copied; PerResource splits it by
	// the first segment of their keys (the resource).
	Objects     int64
	PerResource map[string]int64
}

// Copy writes every object of from, as of its current revision, into
// to, which must hold no object (ErrTargetNotEmpty). Objects keep their
// bytes and get the target's revisions. progress, when not nil, gets the
// objects copied and to copy. The counts are verified at the end: the
// target must hold exactly what was copied. No other writer may use to
// meanwhile; writes to from after the copy began are not copied.
func Copy(ctx context.Context, from, to bolt.Store, progress func(done, total int64)) (CopyResult, error) {
	res := CopyResult{PerResource: map[string]int64{}}
	if n := to.Count("/"); n > 0 {
		return res, fmt.Errorf("%w: it holds %d objects", ErrTargetNotEmpty, n)
	}
	res.Revision = from.Revision()
	total := from.Count("/")
	var (
		ops   []bolt.Op
		bytes int
	)
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		if _, err := to.Txn(ctx, ops); err != nil {
			var oe *bolt.OpError
			if errors.As(err, &oe) && errors.Is(err, bolt.ErrExists) {
				return fmt.Errorf("%w: %s was written to it during the copy", ErrTargetNotEmpty, oe.Key)
			}
			return fmt.Errorf("writing %d objects (%d bytes) from %s: %w", len(ops), bytes, ops[0].Key, err)
		}
		for _, op := range ops {
			res.Objects++
			res.PerResource[resourceOf(op.Key)]++
		}
		ops, bytes = ops[:0], 0
		if progress != nil {
			progress(res.Objects, max(total, res.Objects))
		}
		return nil
	}
	start := ""
	for {
		page, err := from.List("/", bolt.ListOptions{Revision: res.Revision, StartKey: start, Limit: copyPageSize, ReportCorrupt: true})
		if err != nil {
			var ce *bolt.CorruptListError
			if errors.As(err, &ce) {
				return res, fmt.Errorf("the source holds values that cannot be read, which a copy would lose: %w", err)
			}
			return res, fmt.Errorf("reading the source at revision %d: %w", res.Revision, err)
		}
		for _, kv := range page.Items {
			if len(ops) == bolt.MaxTxnOps || (len(ops) > 0 && bytes+len(kv.Value) > copyTxnBytes) {
				if err := flush(); err != nil {
					return res, err
				}
			}
			// The page's values belong to the source: the op only reads them.
			ops = append(ops, bolt.CreateOp(kv.Key, kv.Value))
			bytes += len(kv.Value)
		}
		if !page.More || len(page.Items) == 0 {
			break
		}
		start = page.Items[len(page.Items)-1].Key + "\x00"
	}
	if err := flush(); err != nil {
		return res, err
	}
	return res, verifyCopy(res, to)
}

// verifyCopy compares the target's counts, per resource and in all, with
// what was copied.
func verifyCopy(res CopyResult, to bolt.Store) error {
	var wrong []string
	names := make([]string, 0, len(res.PerResource))
	for r := range res.PerResource {
		names = append(names, r)
	}
	sort.Strings(names)
	for _, r := range names {
		if got := to.Count("/" + r + "/"); got != res.PerResource[r] {
			wrong = append(wrong, fmt.Sprintf("%s: %d, copied %d", r, got, res.PerResource[r]))
		}
	}
	if got := to.Count("/"); got != res.Objects {
		wrong = append(wrong, fmt.Sprintf("in all: %d, copied %d", got, res.Objects))
	}
	if len(wrong) > 0 {
		return fmt.Errorf("the target's counts differ from the copy's: %s", strings.Join(wrong, "; "))
	}
	return nil
}

// resourceOf is the first segment of a key, which names its resource:
// "/configmaps/ns/a" is "configmaps", "/deployments.apps/ns/d"
// "deployments.apps".
func resourceOf(key string) string {
	r, _, _ := strings.Cut(strings.TrimPrefix(key, "/"), "/")
	return r
}

// MigrateOptions name the two stores of a migration. Each is opened as
// `platd serve` with those options would open it: StorageBackend, DataDir
// (the bbolt file), Etcd, Brand (recorded in a bbolt file) and Encryption
// (values are decrypted from the source and encrypted into the target as
// each configuration says).
type MigrateOptions struct {
	From, To config.Options
	// Progress, when not nil, gets the objects copied and to copy.
	Progress func(done, total int64)
	Log      *slog.Logger
}

// Migrate copies every object of one store into another that holds none
// (see Copy), for `platd migrate`. No platd may be using either store.
// What a failed migration wrote is removed, so that it can be run again:
// a bbolt target file it created, or every key of an etcd target prefix
// it found empty. Both sides are opened without etcd compaction.
func Migrate(ctx context.Context, m MigrateOptions) (CopyResult, error) {
	if m.Log == nil {
		m.Log = slog.Default()
	}
	if !m.From.UsesEtcd() {
		if _, err := os.Stat(m.From.DBPath()); errors.Is(err, os.ErrNotExist) {
			return CopyResult{}, fmt.Errorf("%w: no database in %s: %s does not exist", config.ErrInvalid, m.From.DataDir, m.From.DBPath())
		}
	}
	from, err := openForMigration(ctx, m.From, m.Log, "source")
	if err != nil {
		return CopyResult{}, err
	}
	defer from.Close()
	created := false
	if !m.To.UsesEtcd() {
		if err := os.MkdirAll(m.To.DataDir, privateDirMode); err != nil {
			return CopyResult{}, fmt.Errorf("creating the data directory %s: %w", m.To.DataDir, err)
		}
		_, err := os.Stat(m.To.DBPath())
		created = errors.Is(err, os.ErrNotExist)
	}
	to, err := openForMigration(ctx, m.To, m.Log, "target")
	if err != nil {
		return CopyResult{}, err
	}
	empty := to.Count("/") == 0
	res, err := Copy(ctx, from, to, m.Progress)
	if es, ok := to.(erasableStore); ok && err != nil && empty && !errors.Is(err, ErrTargetNotEmpty) {
		err = erase(ctx, es, m.To.Etcd.Prefix, err)
	}
	if cerr := to.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("closing the target: %w", cerr)
	}
	if err != nil && created && !errors.Is(err, ErrTargetNotEmpty) {
		if rerr := os.Remove(m.To.DBPath()); rerr == nil {
			err = fmt.Errorf("%w (the partly written %s is removed)", err, m.To.DBPath())
		}
	}
	return res, err
}

// erase deletes what a failed migration (err) wrote into the empty etcd
// prefix it copied into, and says so in the error it returns.
func erase(ctx context.Context, es erasableStore, prefix string, err error) error {
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), eraseTimeout)
	defer cancel()
	if eerr := es.Erase(ectx); eerr != nil {
		return fmt.Errorf("%w; deleting what it wrote under the etcd prefix %s failed too (%v): delete its keys "+
			"(etcdctl del --prefix %s/ and etcdctl del %s) before migrating again", err, prefix, eerr, strings.TrimSuffix(prefix, "/"), etcd.TagKey(prefix))
	}
	return fmt.Errorf("%w (what it wrote under the etcd prefix %s is deleted: the prefix is empty again)", err, prefix)
}

// openForMigration opens one store of a migration as a server with o
// would, naming it in errors. Compaction of etcd is off: a long copy must
// not compact the history of the revision it reads at.
func openForMigration(ctx context.Context, o config.Options, log *slog.Logger, role string) (bolt.Store, error) {
	o.Etcd.CompactionInterval = 0
	s := &Server{opts: o, log: log, metrics: metrics.New()}
	if o.UsesEtcd() {
		var err error
		if s.etcdTLS, err = etcdTLS(o.Etcd); err != nil {
			return nil, fmt.Errorf("the %s: %w", role, err)
		}
	}
	t, err := s.storeTransformer()
	if err != nil {
		return nil, fmt.Errorf("%w: the %s's --encryption-provider-config: %w", config.ErrInvalid, role, err)
	}
	st, err := s.openStore(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("the %s: %w", role, err)
	}
	return st, nil
}
