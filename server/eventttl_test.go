package server_test

import (
	"testing"
	"time"

	"platd/config"
)

// An event is removed one --event-ttl after its last write, and watchers
// see it deleted, as upstream's leased event keys.
func TestEventTTLRemovesEvents(t *testing.T) {
	t.Parallel()
	e := start(t, func(o *config.Options) { o.EventTTL = time.Second })
	const ns = "ttl"
	e.do("POST", "/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}).mustCode(t, 201)
	w := e.watch("/api/v1/namespaces/" + ns + "/events?watch=1")
	e.do("POST", "/api/v1/namespaces/"+ns+"/events", map[string]any{
		"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": "ev"},
		"involvedObject": map[string]any{"kind": "Pod", "name": "p", "namespace": ns},
		"reason":         "Tested", "message": "m", "type": "Normal",
	}).mustCode(t, 201)
	w.expect("ADDED", "ev")
	w.expect("DELETED", "ev")
	e.do("GET", "/api/v1/namespaces/"+ns+"/events/ev", nil).mustCode(t, 404)
}
