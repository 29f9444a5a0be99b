package rest

import (
	"encoding/json"
	"fmt"

	"platd/codec"
	"platd/server/apierr"
	"platd/server/protobuf"
	"platd/server/registry"
	"platd/server/schema"
)

// Responses are produced as JSON first (stored objects are JSON); the
// protobuf form is derived per request from that JSON.

// protobufBody re-encodes a compact JSON response as a protobuf envelope.
// d is the descriptor of the addressed resource; nil for bodies that can
// only be a Status.
func protobufBody(d *registry.Descriptor, body []byte) ([]byte, error) {
	var head struct {
		Kind       string            `json:"kind"`
		APIVersion string            `json:"apiVersion"`
		Metadata   map[string]any    `json:"metadata"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, fmt.Errorf("re-encoding response as protobuf: %w", err)
	}
	switch {
	case head.Kind == "Status":
		var st apierr.Status
		if err := json.Unmarshal(body, &st); err != nil {
			return nil, err
		}
		return codec.WrapProtobuf(nil, "v1", "Status", protobuf.MarshalStatus(nil, &st)), nil
	case d != nil && head.Kind == d.ListKind:
		raw := protobuf.AppendListHead(make([]byte, 0, len(body)), head.Metadata)
		var item []byte
		for _, it := range head.Items {
			obj, err := schema.Decode(it, d.Schema)
			if err != nil {
				return nil, err
			}
			if item, err = protobuf.Marshal(item[:0], obj.Object, d.Schema); err != nil {
				return nil, err
			}
			raw = protobuf.AppendListItem(raw, item)
		}
		return codec.WrapProtobuf(nil, head.APIVersion, head.Kind, raw), nil
	case d != nil:
		raw, err := objectProtobuf(d, body)
		if err != nil {
			return nil, err
		}
		return codec.WrapProtobuf(nil, head.APIVersion, head.Kind, raw), nil
	}
	return nil, fmt.Errorf("no protobuf form for %s", head.Kind)
}

// objectProtobuf encodes one object's JSON as its protobuf message.
func objectProtobuf(d *registry.Descriptor, objJSON []byte) ([]byte, error) {
	obj, err := schema.Decode(objJSON, d.Schema)
	if err != nil {
		return nil, err
	}
	return protobuf.Marshal(nil, obj.Object, d.Schema)
}

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
