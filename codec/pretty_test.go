package codec

import (
	"net/url"
	"testing"
)

func TestWantPretty(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		query  string
		ua     string
		params map[string]string
		want   bool
	}{
		{"curl", "", "curl/7.88.1", nil, true},
		{"wget", "", "Wget/1.21", nil, true},
		{"browser", "", "Mozilla/5.0 (X11)", nil, true},
		{"client", "", "golden-client/1.0", nil, false},
		{"kubectl-like", "", "ctl/v1.32.0 (linux/amd64)", nil, false},
		{"query true", "pretty=true", "golden-client/1.0", nil, true},
		{"query 1", "pretty=1", "golden-client/1.0", nil, true},
		{"query false beats curl", "pretty=false", "curl/7.88.1", nil, false},
		{"query 0 beats curl", "pretty=0", "curl/7.88.1", nil, false},
		{"unparsable is compact even for curl", "pretty=yes", "curl/7.88.1", nil, false},
		{"empty query falls back to agent", "pretty=", "curl/7.88.1", nil, true},
		{"empty query, client", "pretty=", "golden-client/1.0", nil, false},
		{"first value counts", "pretty=false&pretty=true", "curl/7.88.1", nil, false},
		{"accept pretty=1", "", "golden-client/1.0", map[string]string{"pretty": "1"}, true},
		{"accept pretty=1 beats query", "pretty=false", "", map[string]string{"pretty": "1"}, true},
		{"accept pretty=true is not 1", "", "golden-client/1.0", map[string]string{"pretty": "true"}, false},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		if got := WantPretty(q, tt.ua, tt.params); got != tt.want {
			t.Errorf("%s: WantPretty = %v, want %v", tt.name, got, tt.want)
		}
	}
}
