package codec

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseContentType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		header     string
		wantType   string
		wantParams map[string]string
		wantErr    bool
	}{
		{"", "application/json", map[string]string{}, false},
		{"application/json", "application/json", map[string]string{}, false},
		{"application/json; charset=utf-8", "application/json", map[string]string{"charset": "utf-8"}, false},
		{"Application/YAML", "application/yaml", map[string]string{}, false},
		{"application/apply-patch+yaml", "application/apply-patch+yaml", map[string]string{}, false},
		{"text/plain", "text/plain", map[string]string{}, false},
		{"application/json; charset", "", nil, true},
		{"/", "", nil, true},
	}
	for _, tt := range tests {
		mt, params, err := ParseContentType(tt.header)
		if tt.wantErr {
			if !errors.Is(err, ErrContentType) {
				t.Errorf("ParseContentType(%q) err = %v, want ErrContentType", tt.header, err)
			}
			continue
		}
		if err != nil || mt != tt.wantType || !reflect.DeepEqual(params, tt.wantParams) {
			t.Errorf("ParseContentType(%q) = %q, %v, %v; want %q, %v", tt.header, mt, params, err, tt.wantType, tt.wantParams)
		}
	}
}
