package server

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"platd/bolt"
	"platd/config"
)

// checkMaxProblems caps the problems `platd check` lists: enough to name
// every damaged key of a badly hit file, few enough to read.
const checkMaxProblems = 1000

// CheckResult is what an offline check found.
type CheckResult struct {
	// Path is the database file.
	Path string
	// Problems describe each damaged record (naming its key or revision)
	// and each broken invariant; none for a sound file.
	Problems []string
}

// Check verifies the database of the data directory dataDir, read-only,
// for `platd check`. No platd may be using the directory. progress, when
// not nil, gets the records read and to read. An error means the check
// could not run; a damaged file is a result with Problems.
func Check(dataDir string, progress func(done, total int64)) (CheckResult, error) {
	o := config.Options{DataDir: dataDir}
	res := CheckResult{Path: o.DBPath()}
	if _, err := os.Stat(res.Path); errors.Is(err, os.ErrNotExist) {
		return res, fmt.Errorf("no database in %s: %s does not exist%s", dataDir, res.Path, noBoltFileHint("check", "etcdctl endpoint health and etcdctl endpoint hashkv"))
	}
	// Values are compared by revisions only: the file may be encrypted at
	// rest, with a key this command does not have. Every record's checksum
	// is still verified.
	err := bolt.Check(res.Path, bolt.CheckOptions{MaxProblems: checkMaxProblems, Progress: progress, RevisionsOnly: true})
	switch {
	case err == nil:
		return res, nil
	case errors.Is(err, bolt.ErrLocked):
		return res, fmt.Errorf("%s is in use by a running platd: stop it first (the check reads the file of a stopped platd)", dataDir)
	case !errors.Is(err, bolt.ErrCorrupt):
		return res, err
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		msg := e.Error()
		for _, prefix := range []string{"bolt: check " + res.Path + ": ", bolt.ErrCorrupt.Error() + ": "} {
			msg = strings.TrimPrefix(msg, prefix)
		}
		res.Problems = append(res.Problems, msg)
	}
	return res, nil
}
