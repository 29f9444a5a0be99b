package printers

import (
	"testing"
	"time"
)

func TestHumanDuration(t *testing.T) {
	const (
		s = time.Second
		m = time.Minute
		h = time.Hour
		d = 24 * time.Hour
		y = 365 * d
	)
	for _, tc := range []struct {
		in   time.Duration
		want string
	}{
		// More than a second in the future is skew beyond tolerance.
		{-2 * s, "<invalid>"},
		{-1500 * time.Millisecond, "0s"},
		{-1 * s, "0s"},
		{-time.Millisecond, "0s"},
		// Seconds up to two minutes.
		{0, "0s"},
		{999 * time.Millisecond, "0s"},
		{59 * s, "59s"},
		{119 * s, "119s"},
		// Minutes and seconds below ten minutes.
		{2 * m, "2m"},
		{2*m + 1*s, "2m1s"},
		{9*m + 59*s, "9m59s"},
		// Minutes below three hours.
		{10 * m, "10m"},
		{10*m + 30*s, "10m"},
		{179 * m, "179m"},
		// Hours and minutes below eight hours.
		{3 * h, "3h"},
		{3*h + 5*m, "3h5m"},
		{7*h + 59*m + 59*s, "7h59m"},
		// Hours below two days.
		{8 * h, "8h"},
		{47*h + 59*m, "47h"},
		// Days and hours below eight days.
		{2 * d, "2d"},
		{2*d + 5*h, "2d5h"},
		{7*d + 23*h, "7d23h"},
		// Days below two years.
		{8 * d, "8d"},
		{729 * d, "729d"},
		// Years and days below eight years.
		{2 * y, "2y"},
		{2*y + 10*d, "2y10d"},
		{7*y + 364*d, "7y364d"},
		// Years beyond.
		{8 * y, "8y"},
		{20*y + 100*d, "20y"},
	} {
		if got := HumanDuration(tc.in); got != tc.want {
			t.Errorf("HumanDuration(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAgeCell(t *testing.T) {
	for _, tc := range []struct {
		name, obj, want string
	}{
		{"no timestamp", `{"metadata":{"name":"a"}}`, "<unknown>"},
		{"null timestamp", `{"metadata":{"name":"a","creationTimestamp":null}}`, "<unknown>"},
		{"zero time", `{"metadata":{"name":"a","creationTimestamp":"0001-01-01T00:00:00Z"}}`, "<unknown>"},
		{"unreadable", `{"metadata":{"name":"a","creationTimestamp":"yesterday"}}`, "<unknown>"},
		{"set", `{"metadata":{"name":"a","creationTimestamp":"` + ago(90*time.Minute) + `"}}`, "90m"},
		{"offset zone", `{"metadata":{"name":"a","creationTimestamp":"2025-03-10T13:00:00+02:00"}}`, "60m"},
		{"future", `{"metadata":{"name":"a","creationTimestamp":"` + ago(-time.Hour) + `"}}`, "<invalid>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := decode(t, tc.obj)
			if got := ageColumn().cell(o, testNow); got != tc.want {
				t.Errorf("age %q, want %q", got, tc.want)
			}
		})
	}
}
