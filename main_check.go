package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"platd/server"
)

// checkProgressAfter is how long a check runs before it reports progress,
// and how often: a small file is checked silently.
const checkProgressAfter = time.Second

// checkCommand is `platd check`: the database file of a stopped platd
// verified read-only; it lists every damaged key and broken invariant and
// exits 1 if there is any.
func checkCommand() *cli.Command {
	return dataDirCommand("check", "verify the database file of a stopped platd (read-only): list damaged keys and problems, exit 1 if any",
		func(c *cli.Context, dir string) error {
			start := time.Now()
			res, err := server.Check(dir, recordProgress(c.App.ErrWriter, checkProgressAfter, "checked"))
			if err != nil {
				return err
			}
			took := time.Since(start).Round(time.Millisecond)
			if len(res.Problems) == 0 {
				fmt.Fprintf(c.App.Writer, "%s: no problems found in %v\n", res.Path, took)
				return nil
			}
			for _, p := range res.Problems {
				fmt.Fprintln(c.App.Writer, p)
			}
			return fmt.Errorf("%s is damaged: %d problems listed above; restore the data directory from a backup, or, "+
				"when only stored values are damaged, start platd and delete those objects with ignoreStoreReadErrorWithClusterBreakingPotential",
				res.Path, len(res.Problems))
		})
}
