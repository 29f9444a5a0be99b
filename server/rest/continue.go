package rest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"platd/server/apierr"
)

// continueToken is the opaque list continuation: the snapshot revision of
// the first page and the key after which the next page starts, relative to
// the listed prefix.
type continueToken struct {
	Version  string `json:"v"`
	Revision int64  `json:"rv"`
	Start    string `json:"start"`
}

func (h *Handler) continueVersion() string { return h.brand.MetaGroup() + "/v1" }

// encodeContinue builds the token that resumes after lastKey.
func (h *Handler) encodeContinue(rev int64, prefix, lastKey string) string {
	rel := "/" + strings.TrimPrefix(lastKey, prefix) + "\x00"
	return h.marshalContinue(rev, rel)
}

func (h *Handler) marshalContinue(rev int64, start string) string {
	b, _ := json.Marshal(continueToken{Version: h.continueVersion(), Revision: rev, Start: start})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeContinue returns the token's revision (-1: latest) and the absolute
// start key under prefix.
func (h *Handler) decodeContinue(token, prefix string) (rev int64, start, rel string, err error) {
	invalid := func(detail string) error {
		return apierr.BadRequest("invalid continue token: continue key is not valid: " + detail)
	}
	raw, derr := base64.RawURLEncoding.DecodeString(token)
	if derr != nil {
		return 0, "", "", invalid(derr.Error())
	}
	var t continueToken
	if jerr := json.Unmarshal(raw, &t); jerr != nil {
		return 0, "", "", invalid(jerr.Error())
	}
	if t.Version != h.continueVersion() {
		return 0, "", "", invalid("server does not recognize this encoded version " + t.Version)
	}
	if t.Revision == 0 {
		return 0, "", "", invalid(fmt.Sprintf("incorrect encoded start resourceVersion (version %s)", t.Version))
	}
	if t.Start == "" {
		return 0, "", "", invalid(fmt.Sprintf("encoded start key empty (version %s)", t.Version))
	}
	// A key that cleaning would change could reach outside prefix ("/../x");
	// names with ".." in them ("a..b", legal for some types) are fine.
	key := t.Start
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	if path.Clean(key) != key {
		return 0, "", "", invalid(t.Start)
	}
	rel = key[1:]
	return t.Revision, prefix + rel, rel, nil
}

// continueExpired is the 410 for a token whose snapshot is no longer held;
// it carries a fresh token that continues from the latest state.
func (h *Handler) continueExpired(rel string) error {
	e := apierr.Expired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
	e.Status.Metadata.Continue = h.marshalContinue(-1, rel)
	return e
}
