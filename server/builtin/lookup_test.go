package builtin

import (
	"platd/server/apierr"
	"platd/server/registry"
)

// fakeLookup serves admission hooks the objects it holds per descriptor,
// cluster-scoped; err, when set, fails every read.
type fakeLookup struct {
	objs map[*registry.Descriptor][]registry.Object
	err  error
}

func (f fakeLookup) Get(d *registry.Descriptor, _, name string) (registry.Object, error) {
	if f.err != nil {
		return nil, f.err
	}
	for _, o := range f.objs[d] {
		if str(o, "metadata", "name") == name {
			return copyObj(o), nil
		}
	}
	return nil, apierr.NotFound(d.Group, d.Resource, name)
}

func (f fakeLookup) List(d *registry.Descriptor, _ string) ([]registry.Object, int64, error) {
	if f.err != nil {
		return nil, 0, f.err
	}
	out := make([]registry.Object, 0, len(f.objs[d]))
	for _, o := range f.objs[d] {
		out = append(out, copyObj(o))
	}
	return out, 1, nil
}
