package registry

// Lookup reads stored objects for a type's admission hooks: the server's
// own read path, in process, at its latest revision. Objects are in d's
// served form, with kind and apiVersion, and are shared with other
// readers: a hook only reads them, never modifies them nor puts a map or
// list of theirs into the object it admits (it copies what it keeps).
// Errors are Status errors (a missing object is a NotFound). It may be
// used concurrently.
type Lookup interface {
	// Get returns the object of d called name in namespace ns ("" for a
	// cluster-scoped resource).
	Get(d *Descriptor, ns, name string) (Object, error)
	// List returns the objects of d in namespace ns ("" for all) and the
	// revision they were read at.
	List(d *Descriptor, ns string) ([]Object, int64, error)
}

// Denial is an admission hook's refusal of a write. It is answered 403
// Forbidden, `<resource> "<name>" is forbidden: <Reason>`, as upstream's
// admission plugins refuse.
type Denial struct{ Reason string }

func (e *Denial) Error() string { return e.Reason }
