package discovery

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"platd/codec"
	"platd/server/protobuf"
	"platd/server/schema"
)

// metaSchema returns the name of the schema of a legacy document: the
// meta type its kind names.
func (h *Handler) metaSchema(compact []byte) string {
	return schema.ReverseDomain(h.brand.Domain) + ".apimachinery.pkg.apis.meta.v1." + typeMetaOf(compact).Kind
}

// aggregatedSchema returns the name of the schema of the aggregated
// document of one apidiscovery version.
func (h *Handler) aggregatedSchema(version string) string {
	return schema.ReverseDomain(h.brand.Domain) + ".api.apidiscovery." + version + "." + aggregatedAs
}

type typeMeta struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
}

// typeMetaOf reads the kind and apiVersion of a document, which the
// protobuf envelope carries: apiVersion is empty for the core group's
// documents, as in their JSON.
func typeMetaOf(compact []byte) typeMeta {
	var tm typeMeta
	_ = json.Unmarshal(compact, &tm) // the server's own document
	return tm
}

// writeProtobuf writes a document, given as compact JSON, as the protobuf
// message of the schema called name in the envelope. The Content-Type
// must already be set.
func (h *Handler) writeProtobuf(w http.ResponseWriter, r *http.Request, compact []byte, name string) {
	body, err := h.encodeProtobuf(compact, name)
	if err != nil {
		writeStatus(w, errInternal(err))
		return
	}
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

func (h *Handler) encodeProtobuf(compact []byte, name string) ([]byte, error) {
	var s *schema.Schema
	if h.opts.Schema != nil {
		s = h.opts.Schema(name)
	}
	if s == nil {
		return nil, fmt.Errorf("no schema %s to encode the document in protobuf", name)
	}
	msg, err := protobuf.Transcode(nil, compact, s)
	if errors.Is(err, protobuf.ErrUnsupported) {
		var obj map[string]any
		if err = json.Unmarshal(compact, &obj); err == nil {
			msg, err = protobuf.Marshal(nil, obj, s)
		}
	}
	if err != nil {
		return nil, err
	}
	tm := typeMetaOf(compact)
	return codec.WrapProtobuf(nil, tm.APIVersion, tm.Kind, msg), nil
}
