package rest

import (
	"fmt"

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
