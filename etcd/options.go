// Package etcd is platd's second storage engine: the bolt.Store contract on
// an etcd cluster (3.5 and later), so that N platd replicas can share one
// state. Every replica mirrors the state under its prefix in memory, kept
// current by one etcd watch, and serves reads from it (as upstream's watch
// cache does); writes are etcd transactions.
package etcd

import (
	"crypto/tls"
	"log/slog"
	"time"

	"platd/bolt"
)

// Options configure a DB opened with Open.
type Options struct {
	// Endpoints are the etcd client URLs ("https://10.0.0.1:2379"). Required.
	Endpoints []string
	// Prefix is prepended to every platd key ("/configmaps/ns/name" is
	// stored as "/registry/configmaps/ns/name"); "" means DefaultPrefix.
	// Replicas sharing a prefix share one state.
	Prefix string
	// TLS, when set, is the client's TLS configuration (CA, client
	// certificate).
	TLS *tls.Config
	// Stamp writes the revision into values as they are read. Required.
	Stamp bolt.Stamper
	// Transformer, when set, turns values into the bytes stored in etcd and
	// back (encryption at rest).
	Transformer bolt.Transformer
	// Verify, when set, checks each value read from etcd; an error marks the
	// key corrupt (see bolt.CorruptError).
	Verify func(key string, value []byte) error
	// HistoryRetention is how long events stay in the in-memory history;
	// 0 means bolt.DefaultHistoryRetention.
	HistoryRetention time.Duration
	// HistoryMaxBytes bounds the memory the in-memory history keeps; 0 means
	// bolt.DefaultHistoryMaxBytes, below 0 no bound.
	HistoryMaxBytes int64
	// CompactionInterval is how often the replicas compact etcd (one of them
	// per interval, coordinated through etcd); 0 means never.
	CompactionInterval time.Duration
	// Logger receives the engine's events; nil means slog.Default().
	Logger *slog.Logger
	// Tag names what the prefix is for (platd records its brand), as
	// bolt.Options.Tag does for a file: the first Open of a prefix that
	// holds no object records it, an Open with another tag is refused with
	// a *bolt.TagError, and a prefix with objects but no tag is left for
	// RecordTag (Untagged). "" records and checks nothing.
	Tag string
	// DialTimeout bounds the first connection to etcd; 0 means
	// DefaultDialTimeout.
	DialTimeout time.Duration
}

// DefaultPrefix is the key prefix when Options.Prefix is empty (upstream's).
const DefaultPrefix = "/registry"

// DefaultDialTimeout bounds the first connection when Options.DialTimeout
// is 0.
const DefaultDialTimeout = 20 * time.Second
