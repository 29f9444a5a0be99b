package security

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"platd/config"
)

// Browsers cannot set headers on a websocket, so a client may send its
// bearer token as one of the Sec-WebSocket-Protocol entries:
// "base64url.bearer.authorization.<domain>.<unpadded base64url token>".

// webSocketProtocolHeader is where a websocket client lists its
// subprotocols.
const webSocketProtocolHeader = "Sec-WebSocket-Protocol"

// Errors of the websocket token, as upstream words them.
var (
	errWSMultipleTokens = errors.New("multiple base64.bearer.authorization tokens specified")
	errWSEncoding       = errors.New("invalid base64.bearer.authorization token encoding")
	errWSNotUTF8        = errors.New("invalid base64.bearer.authorization token")
	errWSNoOther        = errors.New("missing additional subprotocol")
)

// WebSocketBearerPrefix is the subprotocol prefix that carries a token.
func WebSocketBearerPrefix(b config.Brand) string {
	return "base64url.bearer." + b.Group("authorization") + "."
}

// NewWebSocketAuthenticator authenticates websocket upgrade requests by the
// token in their subprotocols, with the same token authenticators as the
// bearer header. On success the token's entry is removed from the header,
// so it is neither echoed back nor seen by the handler.
func NewWebSocketAuthenticator(b config.Brand, tokens ...TokenAuthenticator) Authenticator {
	return webSocketToken{prefix: WebSocketBearerPrefix(b), tokens: tokens}
}

type webSocketToken struct {
	prefix string
	tokens []TokenAuthenticator
}

func (a webSocketToken) AuthenticateRequest(r *http.Request) (*User, bool, error) {
	if !isWebSocketUpgrade(r.Header) {
		return nil, false, nil
	}
	token, others, err := WebSocketToken(r.Header.Values(webSocketProtocolHeader), a.prefix)
	if err != nil || token == "" {
		return nil, false, err
	}
	u, ok, err := authenticateToken(r, a.tokens, token)
	if ok {
		r.Header.Set(webSocketProtocolHeader, strings.Join(others, ","))
	}
	return u, ok, err
}

// WebSocketToken finds the token among the values of
// Sec-WebSocket-Protocol headers; others are the remaining entries. A
// request without a token entry yields "" and no error.
func WebSocketToken(values []string, prefix string) (token string, others []string, err error) {
	seen := false
	for _, v := range values {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			enc, ok := strings.CutPrefix(p, prefix)
			if !ok {
				others = append(others, p)
				continue
			}
			if seen {
				return "", nil, errWSMultipleTokens
			}
			seen = true
			raw, err := base64.RawURLEncoding.DecodeString(enc)
			if err != nil {
				return "", nil, errWSEncoding
			}
			if !utf8.Valid(raw) {
				return "", nil, errWSNotUTF8
			}
			token = string(raw)
		}
	}
	// The server must answer with one of the client's other subprotocols.
	if token != "" && len(others) == 0 {
		return "", nil, errWSNoOther
	}
	return token, others, nil
}

// isWebSocketUpgrade reports whether the headers ask to upgrade to a
// websocket.
func isWebSocketUpgrade(h http.Header) bool {
	upgrade := false
	for _, c := range h.Values("Connection") {
		if strings.Contains(strings.ToLower(c), "upgrade") {
			upgrade = true
			break
		}
	}
	return upgrade && strings.EqualFold(h.Get("Upgrade"), "websocket")
}
