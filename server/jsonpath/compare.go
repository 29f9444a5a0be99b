package jsonpath

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Comparison errors, worded as Go's text/template comparisons that
// upstream's filters use.
var (
	errBadComparisonType = errors.New("invalid type for comparison")
	errBadComparison     = errors.New("incompatible types for comparison")
)

type kind int

const (
	badKind kind = iota
	boolKind
	intKind
	uintKind
	floatKind
	stringKind
)

// basic classifies a filter operand. Integers in data (int64) and in the
// template (int) compare with each other, but never with floats.
func basic(v any) (kind, error) {
	switch v.(type) {
	case bool:
		return boolKind, nil
	case int, int64:
		return intKind, nil
	case uint8:
		return uintKind, nil
	case float64:
		return floatKind, nil
	case string:
		return stringKind, nil
	}
	return badKind, errBadComparisonType
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

func asUint(v any) uint64 {
	if x, ok := v.(uint8); ok {
		return uint64(x)
	}
	return 0
}

func equal(a, b any) (bool, error) {
	ka, err := basic(a)
	if err != nil {
		return false, err
	}
	kb, err := basic(b)
	if err != nil {
		return false, err
	}
	if ka != kb {
		switch {
		case ka == intKind && kb == uintKind:
			return asInt(a) >= 0 && uint64(asInt(a)) == asUint(b), nil
		case ka == uintKind && kb == intKind:
			return asInt(b) >= 0 && asUint(a) == uint64(asInt(b)), nil
		}
		return false, errBadComparison
	}
	switch ka {
	case boolKind:
		return a.(bool) == b.(bool), nil
	case intKind:
		return asInt(a) == asInt(b), nil
	case uintKind:
		return asUint(a) == asUint(b), nil
	case floatKind:
		return a.(float64) == b.(float64), nil
	default:
		return a.(string) == b.(string), nil
	}
}

func less(a, b any) (bool, error) {
	ka, err := basic(a)
	if err != nil {
		return false, err
	}
	kb, err := basic(b)
	if err != nil {
		return false, err
	}
	if ka != kb {
		switch {
		case ka == intKind && kb == uintKind:
			return asInt(a) < 0 || uint64(asInt(a)) < asUint(b), nil
		case ka == uintKind && kb == intKind:
			return asInt(b) >= 0 && asUint(a) < uint64(asInt(b)), nil
		}
		return false, errBadComparison
	}
	switch ka {
	case intKind:
		return asInt(a) < asInt(b), nil
	case uintKind:
		return asUint(a) < asUint(b), nil
	case floatKind:
		return a.(float64) < b.(float64), nil
	case stringKind:
		return a.(string) < b.(string), nil
	}
	return false, errBadComparisonType
}

// compare evaluates a filter's operator.
func compare(op string, a, b any) (bool, error) {
	switch op {
	case "==":
		return equal(a, b)
	case "!=":
		eq, err := equal(a, b)
		return !eq, err
	case "<":
		return less(a, b)
	case "<=":
		return lessEqual(a, b)
	case ">":
		le, err := lessEqual(a, b)
		if err != nil {
			return false, err
		}
		return !le, nil
	case ">=":
		lt, err := less(a, b)
		if err != nil {
			return false, err
		}
		return !lt, nil
	}
	return false, fmt.Errorf("unrecognized filter operator %s", op)
}

func lessEqual(a, b any) (bool, error) {
	lt, err := less(a, b)
	if lt || err != nil {
		return lt, err
	}
	return equal(a, b)
}

// Text renders one selected value as upstream prints a result: objects and
// arrays as compact JSON, other values as Go's fmt prints them (a null as
// "<nil>").
func Text(v any) (string, error) {
	switch v.(type) {
	case map[string]any, []any:
		b, err := json.Marshal(v)
		if err != nil {
			return "", fmt.Errorf("encode result: %w", err)
		}
		return string(b), nil
	}
	return fmt.Sprint(v), nil
}
