package builtin

import (
	"slices"
	"testing"
)

// TestValidateLabels: a label map's errors name the map, one per bad key
// or value, in the order of the keys; a valid map has none, found
// without allocating.
func TestValidateLabels(t *testing.T) {
	const keyMsg = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
	const valueMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
	tests := []struct {
		name   string
		labels string
		want   []string
	}{
		{"none", `{}`, nil},
		{"valid", `{"app":"a","tier":"","x.example.com/y":"z"}`, nil},
		{"bad keys and values in key order", `{"z-":"v","a":"-v","-b":"ok"}`, []string{
			`metadata.labels: Invalid value: "-b": ` + keyMsg,
			`metadata.labels: Invalid value: "-v": ` + valueMsg,
			`metadata.labels: Invalid value: "z-": ` + keyMsg,
		}},
	}
	for _, tt := range tests {
		labels := decodeJSON(t, tt.labels)
		got := errStrings(validateLabels(labels, "metadata.labels"))
		if len(got) == 0 {
			got = nil
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got  %q\n want %q", tt.name, got, tt.want)
		}
	}
	labels := decodeJSON(t, `{"app":"a","tier":"backend","version":"v2.14.3","x.example.com/y":"z"}`)
	if n := testing.AllocsPerRun(100, func() { validateLabels(labels, "metadata.labels") }); n != 0 {
		t.Errorf("checking valid labels: %v allocations", n)
	}
}
