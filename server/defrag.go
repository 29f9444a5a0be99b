package server

import (
	"errors"
	"fmt"
	"os"

	"platd/bolt"
	"platd/config"
)

// DefragResult is what an offline defrag did.
type DefragResult struct {
	// Path is the database file.
	Path string
	// Before and After are its sizes in bytes.
	Before, After int64
}

// Defrag rewrites the database of the data directory dataDir into a
// compact file, for `platd defrag`. No platd may be using the directory.
// progress, when not nil, gets the records copied and to copy.
func Defrag(dataDir string, progress func(done, total int64)) (DefragResult, error) {
	o := config.Options{DataDir: dataDir}
	res := DefragResult{Path: o.DBPath()}
	if _, err := os.Stat(res.Path); errors.Is(err, os.ErrNotExist) {
		return res, fmt.Errorf("no database in %s: %s does not exist%s", dataDir, res.Path, noBoltFileHint("defrag", "etcdctl defrag"))
	}
	var err error
	res.Before, res.After, err = bolt.DefragFile(res.Path, progress)
	if errors.Is(err, bolt.ErrLocked) {
		return res, fmt.Errorf("%s is in use by a running platd: stop it first (a running platd rewrites the file itself when it is more than --storage-defrag-threshold times its live data)", dataDir)
	}
	return res, err
}
