package builtin

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A CronJob's schedule is a standard five-field cron expression or an @
// descriptor, checked as upstream's parser checks it and refused with its
// error texts. The schedule is only checked here: platd runs no cron
// controller.

// cronField is the range and the names of one cron field.
type cronField struct {
	min, max uint
	names    map[string]uint
}

// The fields of a standard schedule, in order; seconds are implied.
var cronFields = []cronField{
	{min: 0, max: 59},
	{min: 0, max: 23},
	{min: 1, max: 31},
	{min: 1, max: 12, names: map[string]uint{
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
		"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	}},
	{min: 0, max: 6, names: map[string]uint{
		"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6,
	}},
}

// cronDescriptors are the @ schedules besides @every.
var cronDescriptors = map[string]bool{
	"@yearly": true, "@annually": true, "@monthly": true, "@weekly": true,
	"@daily": true, "@midnight": true, "@hourly": true,
}

// parseCron checks a standard cron schedule and returns why it is not
// one, or nil.
func parseCron(spec string) error {
	if spec == "" {
		return fmt.Errorf("empty spec string")
	}
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		eq := strings.Index(spec, "=")
		sp := strings.Index(spec, " ")
		if sp < eq {
			// No schedule follows the zone.
			return fmt.Errorf("provided bad location %s: missing schedule", spec[eq+1:])
		}
		name := spec[eq+1 : sp]
		if _, err := time.LoadLocation(name); err != nil {
			return fmt.Errorf("provided bad location %s: %v", name, err)
		}
		spec = strings.TrimSpace(spec[sp:])
	}
	if strings.HasPrefix(spec, "@") {
		return parseCronDescriptor(spec)
	}
	fields := strings.Fields(spec)
	if len(fields) != len(cronFields) {
		return fmt.Errorf("expected exactly %d fields, found %d: %s", len(cronFields), len(fields), fmt.Sprint(fields))
	}
	for i, f := range fields {
		for _, expr := range strings.FieldsFunc(f, func(r rune) bool { return r == ',' }) {
			if err := parseCronRange(expr, cronFields[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func parseCronDescriptor(spec string) error {
	if cronDescriptors[spec] {
		return nil
	}
	const every = "@every "
	if d, ok := strings.CutPrefix(spec, every); ok {
		if _, err := time.ParseDuration(d); err != nil {
			return fmt.Errorf("failed to parse duration %s: %s", spec, err)
		}
		return nil
	}
	return fmt.Errorf("unrecognized descriptor: %s", spec)
}

// parseCronRange checks one comma-separated part of a field: "*", "?", a
// value or a range, with an optional step.
func parseCronRange(expr string, f cronField) error {
	rangeAndStep := strings.Split(expr, "/")
	lowHigh := strings.Split(rangeAndStep[0], "-")
	var start, end uint
	if lowHigh[0] == "*" || lowHigh[0] == "?" {
		start, end = f.min, f.max
	} else {
		var err error
		if start, err = cronValue(lowHigh[0], f.names); err != nil {
			return err
		}
		switch len(lowHigh) {
		case 1:
			end = start
		case 2:
			if end, err = cronValue(lowHigh[1], f.names); err != nil {
				return err
			}
		default:
			return fmt.Errorf("too many hyphens: %s", expr)
		}
	}
	step := uint(1)
	switch len(rangeAndStep) {
	case 1:
	case 2:
		var err error
		if step, err = cronInt(rangeAndStep[1]); err != nil {
			return err
		}
		// "N/step" runs from N to the field's end.
		if len(lowHigh) == 1 {
			end = f.max
		}
	default:
		return fmt.Errorf("too many slashes: %s", expr)
	}
	switch {
	case start < f.min:
		return fmt.Errorf("beginning of range (%d) below minimum (%d): %s", start, f.min, expr)
	case end > f.max:
		return fmt.Errorf("end of range (%d) above maximum (%d): %s", end, f.max, expr)
	case start > end:
		return fmt.Errorf("beginning of range (%d) beyond end of range (%d): %s", start, end, expr)
	case step == 0:
		return fmt.Errorf("step of range should be a positive number: %s", expr)
	}
	return nil
}

func cronValue(s string, names map[string]uint) (uint, error) {
	if n, ok := names[strings.ToLower(s)]; ok {
		return n, nil
	}
	return cronInt(s)
}

func cronInt(s string) (uint, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("failed to parse int from %s: %s", s, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative number (%d) not allowed: %s", n, s)
	}
	return uint(n), nil
}
