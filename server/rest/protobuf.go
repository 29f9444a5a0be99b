package rest

import (
	"fmt"
	"runtime"
	"sync"

	"platd/bolt"
	"platd/codec"
	"platd/server/apierr"
	"platd/server/protobuf"
)

// decodeProtobufBody decodes a protobuf request body into an object.
func (h *Handler) decodeProtobufBody(body []byte, s *scope) (*decoded, error) {
	d := s.d
	apiVersion, kind, raw, err := codec.UnwrapProtobuf(body)
	if err != nil {
		return nil, apierr.BadRequest(err.Error())
	}
	if kind != "" && kind != d.Kind {
		return nil, apierr.BadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: converting (%s.%s) to (%s.%s): unknown conversion",
			kind, versionOf(apiVersion), d.Kind, versionOf(apiVersion), kind, internalPackage(d.Group), d.Kind))
	}
	if apiVersion != "" && apiVersion != d.GroupVersion() {
		return nil, apierr.BadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", apiVersion, d.GroupVersion()))
	}
	obj, err := protobuf.Unmarshal(raw, d.Schema)
	if err != nil {
		return nil, h.cannotHandle(d.Kind, d.GroupVersion(), err.Error())
	}
	obj["kind"], obj["apiVersion"] = d.Kind, d.GroupVersion()
	return &decoded{obj: obj}, nil
}

// listProto renders a list in protobuf: each item transcoded from its
// stored bytes straight into the list message, which is built behind room
// for the envelope so that wrapping it copies nothing. size estimates the
// message; protobuf is smaller than the JSON it is measured in. A long
// list is transcoded in parts by several goroutines.
func (rd *renderer) listProto(lm listMeta, items []bolt.KV, size int) ([]byte, error) {
	gv, kind := rd.d.GroupVersion(), rd.d.ListKind
	room := codec.ProtobufHeadroom(gv, kind)
	raw := protobuf.AppendListHead(make([]byte, room, room+size), lm.asMap())
	parts := listParts(len(items))
	if parts < 2 {
		var err error
		if raw, err = rd.appendProtoItems(raw, items); err != nil {
			return nil, err
		}
		return codec.WrapProtobufAt(raw, room, gv, kind), nil
	}
	// Each part is written into its own region of raw, sized by its stored
	// bytes, which protobuf rarely outgrows; the parts are then closed up
	// behind the first, which this goroutine writes. A part that outgrows
	// its region moves to its own array (append does that), and then the
	// list is assembled in a new one.
	per := (len(items) + parts - 1) / parts
	part := func(p int) []bolt.KV { return items[min(p*per, len(items)):min((p+1)*per, len(items))] }
	bufs := make([][]byte, parts) // part p's region, then its output
	caps := make([]int, parts)
	errs := make([]error, parts)
	end := len(raw)
	for p := range parts {
		start := end
		end = min(start+storedSize(part(p)), cap(raw))
		bufs[p] = raw[start:start:end]
		if p == 0 {
			bufs[0] = raw[:start:end] // the first part follows the head
		}
		caps[p] = cap(bufs[p])
	}
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Go(func() { bufs[p], errs[p] = rd.appendProtoItems(bufs[p], part(p)) })
	}
	bufs[0], errs[0] = rd.appendProtoItems(bufs[0], part(0))
	wg.Wait()
	inPlace := true
	for p := range parts {
		if errs[p] != nil {
			return nil, errs[p]
		}
		inPlace = inPlace && cap(bufs[p]) == caps[p]
	}
	if inPlace {
		raw = raw[:len(bufs[0])]
	} else {
		raw = bufs[0]
		n := 0
		for _, b := range bufs {
			n += len(b)
		}
		raw = append(make([]byte, 0, n+64), raw...)
	}
	for _, b := range bufs[1:] {
		raw = append(raw, b...) // in place, a move down within raw's array
	}
	return codec.WrapProtobufAt(raw, room, gv, kind), nil
}

// Parallel rendering of long lists (protobuf, Table): a part must be long
// enough that handing it to a goroutine costs little beside rendering it,
// and a few workers are enough to keep the network busy.
const (
	minItemsPerWorker = 1024
	maxListWorkers    = 4
)

// listParts is how many parts a list of n items is rendered in, at least 1.
func listParts(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), maxListWorkers, n/minItemsPerWorker))
}

// storedSize is the total length of the items' stored bytes.
func storedSize(items []bolt.KV) int {
	n := 0
	for i := range items {
		n += len(items[i].Value)
	}
	return n
}

// appendProtoItems appends items as the items fields of a list message.
// It uses no renderer state but the descriptor, so parts of a list may be
// appended concurrently.
func (rd *renderer) appendProtoItems(raw []byte, items []bolt.KV) ([]byte, error) {
	var item []byte
	for i := range items {
		if rd.d.Storage == nil {
			var err error
			if raw, err = protobuf.AppendListItemJSON(raw, items[i].Value, rd.d.Schema); err == nil {
				continue
			}
		}
		var err error
		if item, err = rd.decodeProto(item[:0], items[i].Value); err != nil {
			return nil, err
		}
		raw = protobuf.AppendListItem(raw, item)
	}
	return raw, nil
}
