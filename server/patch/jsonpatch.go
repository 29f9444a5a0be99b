package patch

import (
	"encoding/json"
	"errors"
	"strings"

	jsonpatch "github.com/evanphx/json-patch"
)

// maxJSONPatchOperations bounds the operations of one JSON patch (as
// upstream): applying is linear in the operations times the document, so an
// unbounded list lets one small request burn a core.
const maxJSONPatchOperations = 10000

// maxCopyBytes bounds the bytes "copy" operations may add to a document (as
// upstream's default, equal to the request body limit): a few copies of a
// copied subtree otherwise grow a small object exponentially.
const maxCopyBytes = 3 << 20

// jsonPatchOp is the shape every operation must decode into. Its name
// appears in decode errors, which upstream reports for its own type of the
// same name.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// JSONPatch applies an RFC 6902 patch to the JSON document original and
// returns the new document (a fresh slice; the arguments are not modified
// or retained). A patch that is not a JSON array of operation objects is
// 400 ErrMalformed ("error decoding patch: ..."); more than 10000
// operations is 413 ErrTooManyOperations; an operation that cannot be
// applied (failed test, missing path, copy over 3 MiB, unknown op) is the
// generic 422 ErrRejected.
func JSONPatch(original []byte, patch []byte) ([]byte, error) {
	var ops []jsonPatchOp
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, badRequest("error decoding patch: "+upstreamTypeText(err), err)
	}
	if len(ops) > maxJSONPatchOperations {
		return nil, tooMany(len(ops))
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		// The operations decoded above, so what the library refuses here is
		// an operation it cannot run; upstream meets those while applying.
		return nil, rejected(err)
	}
	out, err := p.Apply(original)
	if err != nil {
		return nil, rejected(err)
	}
	return out, nil
}

// The library upstream applies JSON and merge patches with is this
// package's v4 line, whose semantics clients rely on (a replace of a
// missing member adds it, an add without a value adds null); its options
// are package settings, set once here as upstream's.
func init() {
	jsonpatch.SupportNegativeIndices = true
	jsonpatch.AccumulatedCopySizeLimit = maxCopyBytes
}

// upstreamTypeText renders a decode error as upstream's does: its operation
// type lives in a package called handlers.
func upstreamTypeText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return strings.ReplaceAll(err.Error(), "patch.jsonPatchOp", "handlers.jsonPatchOp")
	}
	return err.Error()
}
