package discovery

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"platd/server/apierr"
)

// ErrEncode reports a discovery document that could not be encoded.
var ErrEncode = errors.New("discovery: encoding failed")

func errMethodNotAllowed() *apierr.Error { return apierr.MethodNotAllowed() }

// errNotAcceptable lists the media types discovery answers in, the brand's
// protobuf type last, as upstream lists its serializers.
func errNotAcceptable(protobufType string) *apierr.Error {
	return apierr.NotAcceptable(acceptedMediaMessage+protobufType, nil)
}

func errInternal(err error) *apierr.Error {
	return apierr.InternalError(fmt.Errorf("%w: %w", ErrEncode, err))
}

// writeStatus writes e as indented JSON: a failure of negotiation cannot
// itself be negotiated, so discovery errors use the fixed form.
func writeStatus(w http.ResponseWriter, e *apierr.Error) {
	body, err := json.MarshalIndent(e.Status, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set(headerContentType, mediaJSON)
	w.WriteHeader(int(e.Status.Code))
	_, _ = w.Write(body)
}
