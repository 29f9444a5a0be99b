package builtin

import (
	"slices"
	"testing"
)

// TestSourcesOf: the sources a volume sets come in the order of
// volumeSources, whatever the members around them; a null source is not
// set; and a volume setting none is defaulted to a scratch directory.
func TestSourcesOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		vol  string
		want []string
	}{
		{`{"name":"v"}`, nil},
		{`{"name":"v","secret":null}`, nil},
		{`{"name":"v","configMap":{"name":"c"}}`, []string{"configMap"}},
		{`{"name":"v","image":{},"configMap":{},"emptyDir":{},"secret":{}}`, []string{"emptyDir", "secret", "configMap", "image"}},
		{`{"name":"v","projected":{},"downwardAPI":null,"csi":{},"unknown":{}}`, []string{"projected", "csi"}},
	} {
		vol := decodeJSON(t, tc.vol)
		if got := sourcesOf(nil, vol); !slices.Equal(got, tc.want) {
			t.Errorf("%s: sources %v, want %v", tc.vol, got, tc.want)
		}
		if got := sourcesOf([]string{"kept"}, vol); !slices.Equal(got, append([]string{"kept"}, tc.want...)) {
			t.Errorf("%s: appended %v", tc.vol, got)
		}
		defaultVolume(vol)
		if _, scratch := vol["emptyDir"]; scratch != (len(tc.want) == 0 || tc.want[0] == "emptyDir") {
			t.Errorf("%s: defaulted to %v", tc.vol, vol)
		}
	}
}
