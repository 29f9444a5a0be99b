package main

import (
	"fmt"
	"io"
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
	return &cli.Command{
		Name:  "check",
		Usage: "verify the database file of a stopped platd (read-only): list damaged keys and problems, exit 1 if any",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data-dir", Value: "platd-data", Usage: "platd's data directory"},
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return fmt.Errorf("%w: %v", errUsage, err)
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("%w: unexpected argument %q", errUsage, c.Args().First())
			}
			start := time.Now()
			res, err := server.Check(c.String("data-dir"), checkProgress(c.App.ErrWriter, checkProgressAfter))
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
		},
	}
}

// checkProgress returns a progress callback that writes a line to w once
// every has passed since the start or the last line.
func checkProgress(w io.Writer, every time.Duration) func(done, total int64) {
	last := time.Now()
	return func(done, total int64) {
		if now := time.Now(); now.Sub(last) >= every && done < total {
			last = now
			fmt.Fprintf(w, "checked %d of %d records (%d%%)\n", done, total, done*100/max(total, 1))
		}
	}
}
