package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// platd migrate refuses what cannot be a migration, with exit code 2 and
// nothing written.
func TestMigrateCommandErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--from", "bbolt"}, "--to is required: bbolt or etcd3"},
		{[]string{"--from", "bbolt", "--to", "bbolt"}, "--from and --to both name bbolt: a migration copies from one backend into the other"},
		{[]string{"--from", "sqlite", "--to", "etcd3"}, `--from "sqlite" is not a storage backend: choose bbolt or etcd3`},
		{[]string{"--from", "bbolt", "--to", "etcd3"}, "needs --etcd-servers"},
		{[]string{"--from", "bbolt", "--to", "etcd3", "--etcd-servers", "http://127.0.0.1:1"}, "no database in " + dir},
		{[]string{"--from", "bbolt", "--to", "etcd3", "--etcd-servers", "http://127.0.0.1:1", "--brand", "other"}, "--brand:"},
		{[]string{"--from", "bbolt", "--to", "etcd3", "extra"}, `unexpected argument "extra"`},
	}
	for _, c := range cases {
		var out, errOut strings.Builder
		app := newApp(nil)
		app.Writer, app.ErrWriter = &out, &errOut
		err := app.Run(append([]string{"platd", "migrate", "--data-dir", dir}, c.args...))
		if code := exitCode(err); code != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, error %v; want exit 2 and %q", c.args, code, err, c.want)
		}
		if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
			t.Errorf("%v: the data directory was created", c.args)
		}
	}
}
