package codec

import (
	"slices"
	"strconv"
	"strings"
)

// MediaRange is one clause of an Accept header.
type MediaRange struct {
	// Type and Subtype are as written (not case-folded); "*" alone on the
	// wire is read as Type "*", Subtype "*".
	Type, Subtype string
	// Params holds every parameter except q; never nil.
	Params map[string]string
	// Q is the quality value: 1 when absent, 0 when unparsable. Clauses
	// with q=0 are kept.
	Q float64
}

// ParseAccept splits an Accept header into media ranges ordered the way
// the API server negotiates: by q descending, then a concrete type before
// "*", then a concrete subtype before "*", otherwise in written order.
// Clauses that are not "type/subtype" (or "*") are skipped. Parameter
// names and values are trimmed of spaces; the q value is not.
func ParseAccept(h string) []MediaRange {
	if h == "" {
		return nil
	}
	out := make([]MediaRange, 0, strings.Count(h, ",")+1)
	for clause := range strings.SplitSeq(h, ",") {
		clause = strings.Trim(clause, " ")
		mediaRange, params, hasParams := strings.Cut(clause, ";")
		typ, sub, hasSlash := strings.Cut(mediaRange, "/")
		typ = strings.Trim(typ, " ")
		switch {
		case !hasSlash && typ == "*":
			sub = "*"
		case hasSlash && !strings.Contains(sub, "/"):
			sub = strings.Trim(sub, " ")
		default:
			continue
		}
		m := MediaRange{Type: typ, Subtype: sub, Params: map[string]string{}, Q: 1}
		if hasParams {
			for p := range strings.SplitSeq(params, ";") {
				k, v, ok := strings.Cut(p, "=")
				if !ok {
					continue
				}
				k = strings.Trim(k, " ")
				if k == "q" {
					// Parsed at 32-bit precision with the error ignored, as the
					// upstream parser does: "q=abc" weighs 0.
					m.Q, _ = strconv.ParseFloat(v, 32)
					continue
				}
				m.Params[k] = strings.Trim(v, " ")
			}
		}
		out = append(out, m)
	}
	// The upstream comparator is not a strict weak order when q values and
	// wildcards are mixed; a stable insertion-style sort reproduces its
	// results for the short lists real clients send.
	slices.SortStableFunc(out, func(a, b MediaRange) int {
		switch {
		case acceptBefore(a, b):
			return -1
		case acceptBefore(b, a):
			return 1
		}
		return 0
	})
	return out
}

// acceptBefore is the upstream "less" relation between two clauses.
func acceptBefore(a, b MediaRange) bool {
	if a.Q > b.Q {
		return true
	}
	if a.Type != "*" && b.Type == "*" {
		return true
	}
	return a.Subtype != "*" && b.Subtype == "*"
}

// RouterAcceptable reports whether an Accept header passes the router-stage
// check that precedes negotiation on resource endpoints: some clause, with
// parameters dropped and spaces trimmed, is exactly "*/*" or equals one of
// produced (compared as written, case-sensitively). An empty header passes;
// "application/*" and a bare "*" do not.
func RouterAcceptable(h string, produced []string) bool {
	if h == "" {
		return true
	}
	for clause := range strings.SplitSeq(h, ",") {
		if i := strings.IndexByte(clause, ';'); i >= 0 {
			clause = clause[:i]
		}
		clause = strings.Trim(clause, " ")
		if clause == "*/*" || slices.Contains(produced, clause) {
			return true
		}
	}
	return false
}
