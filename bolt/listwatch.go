package bolt

import "context"

// ListWatcher is the part of a Store that ListWatch uses.
type ListWatcher interface {
	List(prefix string, opts ListOptions) (ListResult, error)
	Watch(ctx context.Context, prefix string, fromRevision int64) (Watcher, error)
}

// ListWatch lists prefix and opens a watch of it that misses no write
// after the list: the start of every consumer that keeps state from a
// watch. The caller stops the returned watcher.
//
// A list of a store nothing was written to yet reads revision 0, which to
// Watch means "from the current revision": a write landing between the
// two would never be seen. So at revision 0 the watch opens first and the
// list is read again; if that list still reads 0 the watch opened before
// any write and sees them all, else the watch starts over from the new
// list's revision. Errors are List's and Watch's, unwrapped.
func ListWatch(ctx context.Context, s ListWatcher, prefix string, opts ListOptions) (ListResult, Watcher, error) {
	res, err := s.List(prefix, opts)
	if err != nil {
		return ListResult{}, nil, err
	}
	if res.Revision > 0 {
		w, err := s.Watch(ctx, prefix, res.Revision)
		if err != nil {
			return ListResult{}, nil, err
		}
		return res, w, nil
	}
	w, err := s.Watch(ctx, prefix, 0)
	if err != nil {
		return ListResult{}, nil, err
	}
	res, err = s.List(prefix, opts)
	if err != nil {
		w.Stop()
		return ListResult{}, nil, err
	}
	if res.Revision == 0 {
		return res, w, nil
	}
	w.Stop()
	if w, err = s.Watch(ctx, prefix, res.Revision); err != nil {
		return ListResult{}, nil, err
	}
	return res, w, nil
}
