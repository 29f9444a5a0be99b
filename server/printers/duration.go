package printers

import (
	"fmt"
	"time"
)

// unknown is what a cell shows for an unset time or an unrecognised value.
const unknown = "<unknown>"

// HumanDuration renders d the way upstream's tables round ages: seconds up
// to two minutes, then ever coarser units, keeping a second unit only while
// the first is small. A duration more than a second negative is clock skew
// beyond tolerance and reads "<invalid>"; a smaller one reads "0s".
func HumanDuration(d time.Duration) string {
	if seconds := int(d.Seconds()); seconds < -1 {
		return "<invalid>"
	} else if seconds < 0 {
		return "0s"
	} else if seconds < 2*60 {
		return fmt.Sprintf("%ds", seconds)
	}
	minutes := int(d / time.Minute)
	if minutes < 10 {
		if s := int(d/time.Second) % 60; s != 0 {
			return fmt.Sprintf("%dm%ds", minutes, s)
		}
		return fmt.Sprintf("%dm", minutes)
	}
	if minutes < 3*60 {
		return fmt.Sprintf("%dm", minutes)
	}
	hours := int(d / time.Hour)
	switch {
	case hours < 8:
		if m := minutes % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", hours, m)
		}
		return fmt.Sprintf("%dh", hours)
	case hours < 48:
		return fmt.Sprintf("%dh", hours)
	case hours < 8*24:
		if h := hours % 24; h != 0 {
			return fmt.Sprintf("%dd%dh", hours/24, h)
		}
		return fmt.Sprintf("%dd", hours/24)
	case hours < 2*365*24:
		return fmt.Sprintf("%dd", hours/24)
	case hours < 8*365*24:
		if days := hours / 24 % 365; days != 0 {
			return fmt.Sprintf("%dy%dd", hours/24/365, days)
		}
		return fmt.Sprintf("%dy", hours/24/365)
	}
	return fmt.Sprintf("%dy", hours/24/365)
}

// since is the Age cell rule: the human duration from t to now, or
// "<unknown>" for an unset time.
func since(t, now time.Time) string {
	if t.IsZero() {
		return unknown
	}
	return HumanDuration(now.Sub(t))
}
