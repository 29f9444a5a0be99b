package builtin

import (
	"context"
	"testing"

	"platd/server/registry"
)

func TestDenyServiceExternalIPs(t *testing.T) {
	t.Parallel()
	const denied = "denied: Use of external IPs is denied by admission control"
	tests := []struct {
		name string
		// ips and old are the externalIPs of the service written and
		// of the stored one; old "-" is a create.
		ips, old string
		err      string
	}{
		{"create without", `null`, "-", ""},
		{"create with none", `[]`, "-", ""},
		{"create with some", `["192.0.2.1"]`, "-", denied},
		{"update adding the first", `["192.0.2.1"]`, `null`, denied},
		{"update adding another", `["192.0.2.1","192.0.2.2"]`, `["192.0.2.1"]`, denied},
		{"update replacing one", `["192.0.2.2"]`, `["192.0.2.1"]`, denied},
		{"update keeping them in another order", `["192.0.2.2","192.0.2.1"]`, `["192.0.2.1","192.0.2.2"]`, ""},
		{"update dropping one", `["192.0.2.2"]`, `["192.0.2.1","192.0.2.2"]`, ""},
		{"update dropping all", `null`, `["192.0.2.1"]`, ""},
	}
	svc := func(t *testing.T, ips string) registry.Object {
		return registry.Object{"metadata": map[string]any{"name": "web"},
			"spec": decodeJSON(t, `{"ports":[{"port":80}],"externalIPs":`+ips+`}`)}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old registry.Object
			if tt.old != "-" {
				old = svc(t, tt.old)
			}
			obj := svc(t, tt.ips)
			before := canonicalJSON(t, obj)
			if got := admissionError(denyNewExternalIPs(context.Background(), nil, obj, old)); got != tt.err {
				t.Errorf("error %q, want %q", got, tt.err)
			}
			if after := canonicalJSON(t, obj); after != before {
				t.Errorf("service changed: %s", after)
			}
		})
	}
}
