package server

import (
	"errors"
	"fmt"

	"platd/bolt"
	"platd/config"
)

// brandMismatch says why a data directory of another brand is refused
// and what to do instead: one directory never mixes the two spellings.
func brandMismatch(dataDir, recorded, wanted string) error {
	return fmt.Errorf("%w: the data directory %s holds the objects of --brand %s, and this start asks for --brand %s; "+
		"one data directory keeps one brand's spellings (system namespaces, groups, labels). "+
		"Start with --brand %s, or give another --data-dir, or delete %s to start over with --brand %s",
		config.ErrInvalid, dataDir, recorded, wanted, recorded, dataDir, wanted)
}

// openError says why the store did not open and what to do: the store's
// refusal of another brand becomes brandMismatch, a file locked by another
// process asks whether another platd runs (only then), and a damaged file
// names the ways out.
func (s *Server) openError(err error) error {
	var te *bolt.TagError
	switch {
	case errors.As(err, &te):
		return brandMismatch(s.opts.DataDir, te.Recorded, te.Wanted)
	case errors.Is(err, bolt.ErrLocked):
		return fmt.Errorf("opening %s: %w (is another platd using this data directory?)", s.opts.DBPath(), err)
	case errors.Is(err, bolt.ErrCorrupt):
		return fmt.Errorf("opening %s: the data file is damaged: %w; restore the data directory from a backup, "+
			"or run `platd check --data-dir %s` to list the damaged keys and problems", s.opts.DBPath(), err, s.opts.DataDir)
	}
	return fmt.Errorf("opening %s: %w", s.opts.DBPath(), err)
}

// storeBrandMismatch is brandMismatch for the store of --storage-backend.
func (s *Server) storeBrandMismatch(recorded, wanted string) error {
	if s.opts.UsesEtcd() {
		return etcdBrandMismatch(s.opts.Etcd, recorded, wanted)
	}
	return brandMismatch(s.opts.DataDir, recorded, wanted)
}

// adoptBrand records the brand in a store (bbolt file, etcd prefix)
// written before brands were recorded, unless its system namespace shows
// it was another brand's. It runs once per such store, before the server
// writes anything.
func (s *Server) adoptBrand() error {
	ts, ok := s.store.(taggedStore)
	if !ok || !ts.Untagged() {
		return nil
	}
	want := s.opts.Brand
	if ns := s.reg.Lookup("", "v1", "namespaces"); ns != nil {
		if _, err := s.store.Get(ns.Key("", want.SystemNamespace)); errors.Is(err, bolt.ErrNotFound) {
			for _, other := range config.BrandNames() {
				ob := config.Brands[other]
				if other == want.Name || ob.SystemNamespace == want.SystemNamespace {
					continue
				}
				if _, err := s.store.Get(ns.Key("", ob.SystemNamespace)); err == nil {
					return s.storeBrandMismatch(other, want.Name)
				}
			}
		}
	}
	if s.opts.UsesEtcd() {
		s.log.Info("recording the brand under the etcd prefix", "brand", want.Name, "prefix", s.opts.Etcd.Prefix)
	} else {
		s.log.Info("recording the brand in the database", "brand", want.Name, "path", s.opts.DBPath())
	}
	var te *bolt.TagError
	if err := ts.RecordTag(); errors.As(err, &te) {
		// Another replica recorded its brand meanwhile.
		return s.storeBrandMismatch(te.Recorded, te.Wanted)
	} else if err != nil {
		return fmt.Errorf("recording the brand: %w", err)
	}
	return nil
}
