package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"platd/config"
	"platd/server"
)

// migrateProgressAfter is how long a migration runs before it reports
// progress, and how often.
const migrateProgressAfter = time.Second

// migrateCommand is `platd migrate`: every object of one storage backend
// copied into another that holds none.
func migrateCommand() *cli.Command {
	backends := strings.Join(config.StorageBackends, " or ")
	flags := []cli.Flag{
		&cli.StringFlag{Name: "from", Usage: "backend copied from: " + backends},
		&cli.StringFlag{Name: "to", Usage: "backend copied into, which must hold no object: " + backends},
		&cli.StringFlag{Name: "data-dir", Value: "platd-data", Usage: "platd's data directory: its bbolt file is the bbolt side"},
		&cli.StringFlag{Name: "brand", Value: "plat", Usage: "API spelling of the data: " + strings.Join(config.BrandNames(), " or ")},
		&cli.StringFlag{Name: "encryption-provider-config", Usage: "EncryptionConfiguration of the data, as platd serve is given it: values are decrypted from the source and encrypted into the target"},
	}
	// The etcd side is named by serve's flags.
	for _, f := range storageFlags() {
		switch n := f.Names()[0]; n {
		case "etcd-servers", "etcd-prefix", "etcd-cafile", "etcd-certfile", "etcd-keyfile":
			flags = append(flags, f)
		}
	}
	return &cli.Command{
		Name:  "migrate",
		Usage: "copy every object of a stopped platd from one storage backend into another that holds none (--from bbolt --to etcd3, or back)",
		Flags: flags,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return fmt.Errorf("%w: %v", errUsage, err)
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("%w: unexpected argument %q", errUsage, c.Args().First())
			}
			from, to, err := migrateOptions(c)
			if err != nil {
				return err
			}
			start := time.Now()
			res, err := server.Migrate(c.Context, server.MigrateOptions{From: from, To: to,
				Progress: recordProgress(c.App.ErrWriter, migrateProgressAfter, "copied")})
			if err != nil {
				return fmt.Errorf("migrating from %s to %s: %w", describeStore(from), describeStore(to), err)
			}
			fmt.Fprintf(c.App.Writer, "copied %d objects of %d resources from %s (revision %d) to %s in %v; the counts match\n",
				res.Objects, len(res.PerResource), describeStore(from), res.Revision, describeStore(to), time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
}

// migrateOptions are the two sides of a migration.
func migrateOptions(c *cli.Context) (from, to config.Options, err error) {
	brand, err := config.LookupBrand(c.String("brand"))
	if err != nil {
		return from, to, fmt.Errorf("%w: --brand: %v", config.ErrInvalid, err)
	}
	base := config.Options{DataDir: c.String("data-dir"), Brand: brand, EncryptionProviderConfigFile: c.String("encryption-provider-config")}
	storageOptions(c, &base)
	if base.EncryptionProviderConfigFile != "" {
		if base.Encryption, err = config.LoadEncryptionConfig(base.EncryptionProviderConfigFile, brand); err != nil {
			return from, to, fmt.Errorf("%w: --encryption-provider-config: %w", config.ErrInvalid, err)
		}
	}
	backends := strings.Join(config.StorageBackends, " or ")
	from, to = base, base
	from.StorageBackend, to.StorageBackend = c.String("from"), c.String("to")
	for _, side := range []struct {
		flag string
		o    *config.Options
	}{{"--from", &from}, {"--to", &to}} {
		if side.o.StorageBackend == "" {
			return from, to, fmt.Errorf("%w: %s is required: %s", errUsage, side.flag, backends)
		}
		if !slices.Contains(config.StorageBackends, side.o.StorageBackend) {
			return from, to, fmt.Errorf("%w: %s %q is not a storage backend: choose %s", config.ErrInvalid, side.flag, side.o.StorageBackend, backends)
		}
	}
	if from.StorageBackend == to.StorageBackend {
		return from, to, fmt.Errorf("%w: --from and --to both name %s: a migration copies from one backend into the other", config.ErrInvalid, from.StorageBackend)
	}
	// A backend's etcd flags are checked only on its etcd side.
	for _, o := range []*config.Options{&from, &to} {
		if !o.UsesEtcd() {
			o.Etcd = config.EtcdOptions{}
		}
		if err := o.ValidateStorage(); err != nil {
			return from, to, err
		}
	}
	return from, to, nil
}

// describeStore names a store of a migration for people.
func describeStore(o config.Options) string {
	if o.UsesEtcd() {
		return fmt.Sprintf("etcd %s (prefix %s)", strings.Join(o.Etcd.Servers, ","), o.Etcd.Prefix)
	}
	return o.DBPath()
}
