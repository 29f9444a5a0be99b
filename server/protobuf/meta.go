package protobuf

import (
	"google.golang.org/protobuf/encoding/protowire"

	"platd/server/schema"
)

// Field numbers of meta/v1beta1 PartialObjectMetadataList, which lists its
// items before its metadata, unlike every other list message.
const (
	v1beta1MetadataListItems    protowire.Number = 1
	v1beta1MetadataListMetadata protowire.Number = 2
)

// AppendV1beta1MetadataListHead is AppendListHead for a meta/v1beta1
// PartialObjectMetadataList: the list metadata under its own field number.
// Items follow with AppendV1beta1MetadataListItem; the decoder accepts the
// fields in any order.
func AppendV1beta1MetadataListHead(dst []byte, listMeta map[string]any) []byte {
	head := AppendListHead(nil, listMeta)
	// Re-tag the ListMeta field: its body follows the tag and length.
	_, _, n := protowire.ConsumeTag(head)
	dst = protowire.AppendTag(dst, v1beta1MetadataListMetadata, protowire.BytesType)
	return append(dst, head[n:]...)
}

// AppendV1beta1MetadataListItem appends one encoded PartialObjectMetadata as
// an item of a meta/v1beta1 PartialObjectMetadataList.
func AppendV1beta1MetadataListItem(dst, item []byte) []byte {
	dst = protowire.AppendTag(dst, v1beta1MetadataListItems, protowire.BytesType)
	return protowire.AppendBytes(dst, item)
}

// V1beta1MetadataListItemSize is the size AppendV1beta1MetadataListItem
// adds for an item of n bytes.
func V1beta1MetadataListItemSize(n int) int {
	return protowire.SizeTag(v1beta1MetadataListItems) + protowire.SizeBytes(n)
}

// partialObjectMetadataMeta is the field of ObjectMeta in
// PartialObjectMetadata (both versions).
const partialObjectMetadataMeta protowire.Number = 1

// AppendPartialObjectMetadata appends a PartialObjectMetadata message whose
// ObjectMeta is the already encoded meta.
func AppendPartialObjectMetadata(dst, meta []byte) []byte {
	dst = protowire.AppendTag(dst, partialObjectMetadataMeta, protowire.BytesType)
	return protowire.AppendBytes(dst, meta)
}

// AppendPartialObjectMetadataJSON is AppendPartialObjectMetadata with the
// ObjectMeta transcoded from its JSON meta, of schema s (see Transcode).
// On error dst is returned at its original length.
func AppendPartialObjectMetadataJSON(dst, meta []byte, s *schema.Schema) ([]byte, error) {
	n := len(dst)
	dst, start, w := openSized(dst, partialObjectMetadataMeta, len(meta))
	dst, err := Transcode(dst, meta, s)
	if err != nil {
		return dst[:n], err
	}
	return closeSized(dst, start, w), nil
}
