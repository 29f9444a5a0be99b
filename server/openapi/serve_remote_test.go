package openapi

import (
	"encoding/json"
	"testing"
)

func TestWithRemoteKeys(t *testing.T) {
	t.Parallel()
	set := &v3Set{docs: map[string]*v3Doc{"api/v1": {}, "apis/apps/v1": {}}}
	index := []byte(`{"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=A"},"apis/apps/v1":{"serverRelativeURL":"/openapi/v3/apis/apps/v1?hash=B"}}}`)
	tests := []struct {
		name string
		keys []string
		want string
	}{
		{"none", nil, string(index)},
		{"served here", []string{"apis/apps/v1"}, string(index)},
		{"remote", []string{"apis/apps/v1", "apis/wardle.example.com/v1alpha1"},
			`{"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=A"},"apis/apps/v1":{"serverRelativeURL":"/openapi/v3/apis/apps/v1?hash=B"},` +
				`"apis/wardle.example.com/v1alpha1":{"serverRelativeURL":"/openapi/v3/apis/wardle.example.com/v1alpha1"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withRemoteKeys(index, set, tt.keys)
			var a, b any
			_ = json.Unmarshal(got, &a)
			_ = json.Unmarshal([]byte(tt.want), &b)
			ga, _ := json.Marshal(a)
			gb, _ := json.Marshal(b)
			if string(ga) != string(gb) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
