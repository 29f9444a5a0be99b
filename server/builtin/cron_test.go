package builtin

import (
	"testing"
)

func TestParseCron(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec, want string
	}{
		{"*/5 * * * *", ""},
		{"0 0 1 jan,JUL mon-fri", ""},
		{"15,45 9-17/2 ? * SUN", ""},
		{"5/15 * * * *", ""},
		{"@hourly", ""},
		{"@every 1h30m", ""},
		{"CRON_TZ=UTC 0 * * * *", ""},
		{"", "empty spec string"},
		{"* * *", "expected exactly 5 fields, found 3: [* * *]"},
		{"* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"},
		{"60 * * * *", "end of range (60) above maximum (59): 60"},
		{"* 5-2 * * *", "beginning of range (5) beyond end of range (2): 5-2"},
		{"* * 0 * *", "beginning of range (0) below minimum (1): 0"},
		{"* * * 13 *", "end of range (13) above maximum (12): 13"},
		{"*/0 * * * *", "step of range should be a positive number: */0"},
		{"1-2-3 * * * *", "too many hyphens: 1-2-3"},
		{"*/2/3 * * * *", "too many slashes: */2/3"},
		{"x * * * *", `failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax`},
		{"-1 * * * *", `failed to parse int from : strconv.Atoi: parsing "": invalid syntax`},
		{"* * * * mon-xyz", `failed to parse int from xyz: strconv.Atoi: parsing "xyz": invalid syntax`},
		{"@often", "unrecognized descriptor: @often"},
		{"@every soon", `failed to parse duration @every soon: time: invalid duration "soon"`},
		{"TZ=Nowhere/City * * * * *", "provided bad location Nowhere/City: unknown time zone Nowhere/City"},
	}
	for _, tt := range tests {
		got := ""
		if err := parseCron(tt.spec); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("parseCron(%q) = %q, want %q", tt.spec, got, tt.want)
		}
	}
}

// FuzzParseCron checks that no schedule makes the parser panic, and that
// what it accepts is stable under surrounding spaces.
func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "0 0 1 jan mon-fri", "@every 1h", "TZ=UTC 0 * * * *", "1-2/3,4 * * * *", "TZ=", "*/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := parseCron(s)
		if err == nil && s != "" && s[0] != '@' && s[0] != 'T' && s[0] != 'C' {
			if again := parseCron("  " + s + "  "); again != nil {
				t.Errorf("%q accepted but not with spaces: %v", s, again)
			}
		}
	})
}
