package protobuf

import (
	"google.golang.org/protobuf/encoding/protowire"

	"platd/server/apierr"
)

// Field numbers of meta/v1 Status, StatusDetails and StatusCause.
const (
	statusMetadata protowire.Number = 1
	statusStatus   protowire.Number = 2
	statusMessage  protowire.Number = 3
	statusReason   protowire.Number = 4
	statusDetails  protowire.Number = 5
	statusCode     protowire.Number = 6

	detailsName       protowire.Number = 1
	detailsGroup      protowire.Number = 2
	detailsKind       protowire.Number = 3
	detailsCauses     protowire.Number = 4
	detailsRetryAfter protowire.Number = 5
	detailsUID        protowire.Number = 6

	causeReason  protowire.Number = 1
	causeMessage protowire.Number = 2
	causeField   protowire.Number = 3
)

// MarshalStatus appends the meta/v1 Status message of st to dst, as
// upstream writes it: metadata, status, message, reason and code always,
// details only when non-nil; inside details every string and
// retryAfterSeconds always, causes when there are any, each cause's three
// strings always. The result is the raw to wrap with codec.WrapProtobuf
// under apiVersion "v1", kind "Status". st is only read.
func MarshalStatus(dst []byte, st *apierr.Status) []byte {
	dst, start := openBytes(dst, statusMetadata)
	md := st.Metadata
	dst = appendListMeta(dst, md.SelfLink, md.ResourceVersion, md.Continue, md.RemainingItemCount)
	dst = closeBytes(dst, start)
	dst = appendStringField(dst, statusStatus, st.Status)
	dst = appendStringField(dst, statusMessage, st.Message)
	dst = appendStringField(dst, statusReason, string(st.Reason))
	if dt := st.Details; dt != nil {
		dst, start = openBytes(dst, statusDetails)
		dst = appendStringField(dst, detailsName, dt.Name)
		dst = appendStringField(dst, detailsGroup, dt.Group)
		dst = appendStringField(dst, detailsKind, dt.Kind)
		for _, c := range dt.Causes {
			var cs int
			dst, cs = openBytes(dst, detailsCauses)
			dst = appendStringField(dst, causeReason, c.Type)
			dst = appendStringField(dst, causeMessage, c.Message)
			dst = appendStringField(dst, causeField, c.Field)
			dst = closeBytes(dst, cs)
		}
		dst = appendVarintField(dst, detailsRetryAfter, uint64(int64(dt.RetryAfterSeconds)))
		dst = appendStringField(dst, detailsUID, dt.UID)
		dst = closeBytes(dst, start)
	}
	return appendVarintField(dst, statusCode, uint64(int64(st.Code)))
}
