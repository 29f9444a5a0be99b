//go:build unix

package bolt

import "os"

// syncDir makes a rename in dir durable: the directory entry is data of
// the directory, written out only by syncing the directory itself.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
