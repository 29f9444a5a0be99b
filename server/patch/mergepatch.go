package patch

import (
	"bytes"
	"encoding/json"
	"errors"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// MergePatch applies an RFC 7386 merge patch to the JSON document original
// and returns the new document (a fresh slice; the arguments are not
// modified or retained). A patch that is not a JSON object or null is 400
// ErrMalformed with upstream's text ("error decoding patch: unexpected end
// of JSON input"). A null patch yields null, as the RFC says; the caller's
// decode of the result rejects it. An original that is not JSON is
// ErrDocument.
func MergePatch(original []byte, patch []byte) ([]byte, error) {
	if err := checkObject(patch); err != nil {
		return nil, badRequest("error decoding patch: "+err.Error(), err)
	}
	out, err := jsonpatch.MergePatch(original, patch)
	if err != nil {
		if errors.Is(err, jsonpatch.ErrBadJSONPatch) {
			return nil, badRequest(err.Error(), err)
		}
		return nil, &plainError{msg: err.Error(), kind: ErrDocument}
	}
	return out, nil
}

// checkObject reports why data is not a JSON object or null, in
// encoding/json's words. The common case (valid object) costs one scan.
func checkObject(data []byte) error {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) > 0 && (t[0] == '{' || t[0] == 'n') && json.Valid(data) {
		return nil
	}
	var m map[string]any
	return json.Unmarshal(data, &m)
}
