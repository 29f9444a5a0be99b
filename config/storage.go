package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Storage backends accepted by --storage-backend, spelled as upstream's.
const (
	// StorageBackendBBolt is the embedded engine: one bbolt file in the
	// data directory. The default.
	StorageBackendBBolt = "bbolt"
	// StorageBackendETCD3 keeps every object in an etcd cluster (etcd 3.5
	// and later), shared by any number of platd replicas.
	StorageBackendETCD3 = "etcd3"
)

// StorageBackends lists the --storage-backend values.
var StorageBackends = []string{StorageBackendBBolt, StorageBackendETCD3}

// Defaults of the etcd flags, upstream's.
const (
	DefaultEtcdPrefix                = "/registry"
	DefaultEtcdCompactionInterval    = 5 * time.Minute
	DefaultEtcdCountMetricPollPeriod = time.Minute
)

// EtcdOptions are the --etcd-* flags, used with --storage-backend=etcd3.
type EtcdOptions struct {
	// Servers are the client URLs of the etcd members.
	Servers []string
	// Prefix is where platd's keys live in etcd: "/registry/configmaps/…".
	Prefix string
	// CAFile verifies the members' serving certificates; CertFile and
	// KeyFile are platd's client certificate. All PEM; "" for none.
	CAFile, CertFile, KeyFile string
	// CompactionInterval is how often etcd's history is compacted to the
	// watch history's start (0: never, etcd's own settings decide).
	CompactionInterval time.Duration
	// CountMetricPollPeriod is how often the object counts of
	// apiserver_storage_objects are refreshed (0: never, the metric is
	// not served).
	CountMetricPollPeriod time.Duration
}

// UsesEtcd reports whether objects are kept in etcd rather than in the
// data directory's bbolt file.
func (o *Options) UsesEtcd() bool { return o.StorageBackend == StorageBackendETCD3 }

// StorageKeyPrefix is the etcd key prefix platd's keys are named under in
// storage errors, as upstream names etcd's keys there: --etcd-prefix on
// etcd, and with bbolt the default, where platd migrate puts them.
func (o *Options) StorageKeyPrefix() string {
	if o.UsesEtcd() && o.Etcd.Prefix != "" {
		return "/" + strings.Trim(o.Etcd.Prefix, "/")
	}
	return DefaultEtcdPrefix
}

// validateStorage checks --storage-backend and the --etcd-* flags. The
// files they name are read at start, before the data directory is touched.
func (o *Options) validateStorage() []string {
	var errs []string
	if o.StorageBackend == "" {
		// Upstream keeps objects only in etcd: --etcd-servers alone
		// means etcd, as a command line written for it means.
		o.StorageBackend = StorageBackendBBolt
		if len(o.Etcd.Servers) > 0 {
			o.StorageBackend = StorageBackendETCD3
		}
	}
	if !slices.Contains(StorageBackends, o.StorageBackend) {
		errs = append(errs, fmt.Sprintf("--storage-backend %q is not supported: choose %s", o.StorageBackend, strings.Join(StorageBackends, " or ")))
		return errs
	}
	e := &o.Etcd
	if e.Prefix == "" {
		e.Prefix = DefaultEtcdPrefix
	}
	if !o.UsesEtcd() {
		// The etcd flags carry defaults: only those a bbolt start cannot
		// have meant are refused.
		if len(e.Servers) > 0 {
			errs = append(errs, "--etcd-servers is given but --storage-backend is "+StorageBackendBBolt+": add --storage-backend="+StorageBackendETCD3+" to keep objects in etcd")
		}
		return errs
	}
	if len(e.Servers) == 0 {
		errs = append(errs, "--storage-backend="+StorageBackendETCD3+" needs --etcd-servers: the comma-separated client URLs of the etcd members, such as https://127.0.0.1:2379")
	}
	for _, s := range e.Servers {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "unix" && u.Scheme != "unixs") {
			errs = append(errs, fmt.Sprintf("--etcd-servers: %q is not an etcd client URL such as https://127.0.0.1:2379", s))
		}
	}
	if !strings.HasPrefix(e.Prefix, "/") {
		errs = append(errs, fmt.Sprintf("--etcd-prefix %q must start with /", e.Prefix))
	}
	e.Prefix = "/" + strings.Trim(e.Prefix, "/")
	if (e.CertFile == "") != (e.KeyFile == "") {
		errs = append(errs, "--etcd-certfile and --etcd-keyfile must be given together")
	}
	if e.CompactionInterval < 0 {
		errs = append(errs, fmt.Sprintf("--etcd-compaction-interval %s must not be negative (0 turns compaction off)", e.CompactionInterval))
	}
	if e.CountMetricPollPeriod < 0 {
		errs = append(errs, fmt.Sprintf("--etcd-count-metric-poll-period %s must not be negative (0 turns the metric off)", e.CountMetricPollPeriod))
	}
	return errs
}

// ValidateStorage checks and completes the storage options alone, for
// commands that open a store without serving (platd migrate).
func (o *Options) ValidateStorage() error {
	if errs := o.validateStorage(); len(errs) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(errs, "; "))
	}
	return nil
}
