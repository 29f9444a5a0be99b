package server_test

import (
	"fmt"
	"strconv"
	"testing"
)

// A restart loads every object and the retained history before /readyz
// answers 200 (startWith returns at the first 200): the first requests
// after it see the state as it was at the stop, every object with its
// revision and data and the deleted ones gone, and a watch from before the
// stop replays the updates and deletes with their objects, the deleted
// ones with the state they were deleted in. The server writes and
// deletes across namespaces so that the reloaded history holds creates,
// updates of earlier events and deletes of updated objects.
func TestRestartReadyServesFullState(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startWith(t, testOptions(t, dir))
	const perNS = 120
	nss := []string{"restart-a", "restart-b", "restart-c"}
	type change struct {
		typ, name, rv, data string
	}
	want := map[string]map[string]map[string]any{} // namespace, name: object as last written
	changes := map[string][]change{}               // namespace: changes after mark, in order
	marks := map[string]string{}                   // namespace: revision of its last create
	for _, ns := range nss {
		e.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": ns}}).mustCreated(t)
		want[ns] = map[string]map[string]any{}
		base := "/api/v1/namespaces/" + ns + "/configmaps"
		for i := range perNS {
			name := fmt.Sprintf("cm-%03d", i)
			want[ns][name] = e.do("POST", base, cm(name, map[string]string{"i": strconv.Itoa(i)}, nil)).mustCreated(t)
		}
		marks[ns] = rvOf(want[ns][fmt.Sprintf("cm-%03d", perNS-1)])
	}
	for _, ns := range nss {
		base := "/api/v1/namespaces/" + ns + "/configmaps"
		for i := 0; i < perNS; i += 4 {
			name := fmt.Sprintf("cm-%03d", i)
			o := want[ns][name]
			o["data"] = map[string]any{"i": "updated-" + strconv.Itoa(i)}
			o = e.do("PUT", base+"/"+name, o).mustCode(t, 200).obj(t)
			want[ns][name] = o
			changes[ns] = append(changes[ns], change{"MODIFIED", name, rvOf(o), "updated-" + strconv.Itoa(i)})
		}
		for i := 0; i < perNS; i += 6 {
			name := fmt.Sprintf("cm-%03d", i)
			data := path(want[ns][name], "data.i").(string)
			e.do("DELETE", base+"/"+name, nil).mustCode(t, 200)
			delete(want[ns], name)
			changes[ns] = append(changes[ns], change{"DELETED", name, "", data})
		}
	}
	e.stop()

	e2 := startWith(t, testOptions(t, dir))
	for _, ns := range nss {
		list := e2.do("GET", "/api/v1/namespaces/"+ns+"/configmaps", nil).mustCode(t, 200).obj(t)
		items, _ := list["items"].([]any)
		if len(items) != len(want[ns]) {
			t.Errorf("%s: %d objects at ready, want %d", ns, len(items), len(want[ns]))
		}
		for _, it := range items {
			o := it.(map[string]any)
			name, _ := path(o, "metadata.name").(string)
			w, ok := want[ns][name]
			switch {
			case !ok:
				t.Errorf("%s/%s served at ready but deleted before the stop", ns, name)
			case rvOf(o) != rvOf(w) || path(o, "data.i") != path(w, "data.i") || path(o, "metadata.uid") != path(w, "metadata.uid"):
				t.Errorf("%s/%s at ready: rv %s data %v uid %v, want rv %s data %v uid %v", ns, name,
					rvOf(o), path(o, "data.i"), path(o, "metadata.uid"), rvOf(w), path(w, "data.i"), path(w, "metadata.uid"))
			}
		}
	}
	for _, ns := range nss {
		w := e2.watch("/api/v1/namespaces/" + ns + "/configmaps?watch=1&resourceVersion=" + marks[ns])
		for _, c := range changes[ns] {
			ev := w.expect(c.typ, c.name)
			if got := path(ev.Object, "data.i"); got != c.data {
				t.Errorf("%s %s/%s replayed with data %v, want %s", c.typ, ns, c.name, got, c.data)
			}
			if c.rv != "" && rvOf(ev.Object) != c.rv {
				t.Errorf("%s %s/%s replayed at %s, want %s", c.typ, ns, c.name, rvOf(ev.Object), c.rv)
			}
		}
		w.stop()
	}
}
