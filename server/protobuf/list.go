package protobuf

import (
	"google.golang.org/protobuf/encoding/protowire"

	"platd/server/schema"
)

// Field numbers shared by every XxxList message and by meta/v1 ListMeta.
const (
	listMetadata      protowire.Number = 1
	listItems         protowire.Number = 2
	listMetaSelfLink  protowire.Number = 1
	listMetaRV        protowire.Number = 2
	listMetaContinue  protowire.Number = 3
	listMetaRemaining protowire.Number = 4
)

// MarshalList appends an XxxList message to dst: {1 metadata, 2 items},
// listMeta being the generic JSON form of the list's ListMeta (nil for
// none) and each item an already encoded object message (a Marshal result,
// without envelope), in the given order. The result is the raw to wrap
// with codec.WrapProtobuf under the list kind. items are only read.
func MarshalList(dst []byte, listMeta map[string]any, items [][]byte) []byte {
	dst = AppendListHead(dst, listMeta)
	for _, it := range items {
		dst = AppendListItem(dst, it)
	}
	return dst
}

// AppendListHead appends the metadata field of a list message: selfLink,
// resourceVersion and continue always, remainingItemCount when the member
// is a number. Items follow with AppendListItem, so a list can be built
// item by item.
func AppendListHead(dst []byte, listMeta map[string]any) []byte {
	self, _ := listMeta["selfLink"].(string)
	rv, _ := listMeta["resourceVersion"].(string)
	cont, _ := listMeta["continue"].(string)
	var remaining *int64
	if v := listMeta["remainingItemCount"]; v != nil {
		if n, err := toInt(v); err == nil {
			remaining = &n
		}
	}
	dst, start := openBytes(dst, listMetadata)
	dst = appendListMeta(dst, self, rv, cont, remaining)
	return closeBytes(dst, start)
}

// AppendListItem appends one encoded item as the items field of a list
// message. item is only read.
func AppendListItem(dst []byte, item []byte) []byte {
	dst = protowire.AppendTag(dst, listItems, protowire.BytesType)
	return protowire.AppendBytes(dst, item)
}

// ListItemSize is the size AppendListItem adds for an item of n bytes.
func ListItemSize(n int) int {
	return protowire.SizeTag(listItems) + protowire.SizeBytes(n)
}

// AppendListItemJSON appends one item as the items field of a list
// message, transcoded from its JSON (see Transcode) straight into dst. On
// error dst is returned at its original length.
func AppendListItemJSON(dst, data []byte, s *schema.Schema) ([]byte, error) {
	n := len(dst)
	dst, start, w := openSized(dst, listItems, len(data))
	dst, err := Transcode(dst, data, s)
	if err != nil {
		return dst[:n], err
	}
	return closeSized(dst, start, w), nil
}

// appendListMeta appends a ListMeta body: the three strings always, the
// count when set.
func appendListMeta(dst []byte, selfLink, rv, cont string, remaining *int64) []byte {
	dst = appendStringField(dst, listMetaSelfLink, selfLink)
	dst = appendStringField(dst, listMetaRV, rv)
	dst = appendStringField(dst, listMetaContinue, cont)
	if remaining != nil {
		dst = appendVarintField(dst, listMetaRemaining, uint64(*remaining))
	}
	return dst
}
