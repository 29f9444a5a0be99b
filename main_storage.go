package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"platd/config"
)

// storageFlags choose the storage engine of `platd serve`, with upstream's
// names and defaults.
func storageFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "storage-backend", Usage: "where objects are kept: " + strings.Join(config.StorageBackends, " or ") +
			"; bbolt is one file in the data directory, etcd3 an etcd cluster (3.5 or later) that several platd replicas may share (default: etcd3 with --etcd-servers, as upstream, else bbolt)"},
		&cli.StringSliceFlag{Name: "etcd-servers", Usage: "client URLs of the etcd members (scheme://host:port), comma-separated; given without --storage-backend, they select etcd3"},
		&cli.StringFlag{Name: "etcd-prefix", Value: config.DefaultEtcdPrefix, Usage: "etcd key prefix every object's key starts with"},
		&cli.StringFlag{Name: "etcd-cafile", Usage: "PEM CA bundle verifying the etcd members' certificates"},
		&cli.StringFlag{Name: "etcd-certfile", Usage: "PEM client certificate platd presents to etcd"},
		&cli.StringFlag{Name: "etcd-keyfile", Usage: "PEM private key of --etcd-certfile"},
		&cli.DurationFlag{Name: "etcd-compaction-interval", Value: config.DefaultEtcdCompactionInterval, Usage: "how often platd asks etcd to compact its history; 0 leaves compaction to etcd's own settings"},
		// Replicas on one host (a lab, a test) share its name, and so the
		// identity lease the API's endpoints are built from; each needs its own.
		&cli.StringFlag{Name: "hostname-override", Hidden: true, Usage: "name of this replica in its identity lease and leader-election identity (default: the host's name)"},
		&cli.DurationFlag{Name: "etcd-count-metric-poll-period", Value: config.DefaultEtcdCountMetricPollPeriod, Usage: "how often the object counts per resource (apiserver_storage_objects) are refreshed; 0 turns the metric off"},
	}
}

// storageOptions are the storage flags as options.
func storageOptions(c *cli.Context, o *config.Options) {
	o.StorageBackend = c.String("storage-backend")
	o.Etcd = config.EtcdOptions{
		Servers: c.StringSlice("etcd-servers"), Prefix: c.String("etcd-prefix"),
		CAFile: c.String("etcd-cafile"), CertFile: c.String("etcd-certfile"), KeyFile: c.String("etcd-keyfile"),
		CompactionInterval: c.Duration("etcd-compaction-interval"), CountMetricPollPeriod: c.Duration("etcd-count-metric-poll-period"),
	}
	o.Replicas.Hostname = c.String("hostname-override")
}
