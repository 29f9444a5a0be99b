package fieldmanager

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"platd/server/schema"
)

// TestApplySkippedPruneEqualsPrune holds applies that skip the prune
// (keepsApplied) to the same objects, entries and errors as applies that
// prune, over random configurations applied twice by one manager (the
// same fields, more, fewer or others), with another manager's update
// between them.
func TestApplySkippedPruneEqualsPrune(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	skipped, succeeded := 0, 0
	for _, k := range [][3]string{{"", "v1", "ConfigMap"}, {"apps", "v1", "Deployment"}, {"", "v1", "Pod"}, {"", "v1", "Service"}} {
		s := kindSchema(t, k[0], k[1], k[2])
		gv := k[1]
		if k[0] != "" {
			gv = k[0] + "/" + k[1]
		}
		o := Options{Group: k[0], Version: k[1], Kind: k[2], Schema: s, Now: (&clock{}).now}
		if s.Field("status") != nil {
			o.Reset = []string{"status"}
		}
		fast, slow := New(o), New(o)
		slow.pruneAlways = true
		config := func() map[string]any {
			for {
				obj, _ := (&objectGen{rng: rng}).object(s, 1).(map[string]any)
				body, _ := json.Marshal(obj)
				dec, err := schema.Decode(body, s)
				if err != nil {
					continue
				}
				c := dec.Object
				delete(c, "status")
				c["apiVersion"], c["kind"] = gv, k[2]
				c["metadata"] = map[string]any{"name": "x", "labels": map[string]any{"app": fmt.Sprint(rng.IntN(2))}}
				return c
			}
		}
		for i := range 150 {
			first, other := config(), config()
			var second map[string]any
			switch i % 4 {
			case 0: // the same configuration
				second = first
			case 1: // the same fields, other values where the pools allow
				second = merged(first, other, true)
			case 2: // more fields
				second = merged(first, other, false)
			default: // others
				second = other
			}
			run := func(r *Resource) (string, error) {
				live, err := r.Apply(nil, first, "m", false)
				if err != nil {
					return "", err
				}
				if i%3 == 0 {
					next := schema.DeepCopy(live).(map[string]any)
					metadata(next)["labels"] = map[string]any{"app": "other", "extra": "1"}
					r.Update(live, next, "other")
					live = next
				}
				out, err := r.Apply(live, second, "m", i%2 == 0)
				if err != nil {
					return "", err
				}
				return encodeJSON(t, out), nil
			}
			if skipsPrune(fast, first, second) {
				skipped++
			}
			got, gotErr := run(fast)
			if gotErr == nil {
				succeeded++
			}
			want, wantErr := run(slow)
			if errText(gotErr) != errText(wantErr) || got != want {
				t.Errorf("%s %d: applying %s then %s:\n skipped %s %v\n pruned  %s %v", k[2], i, encodeJSON(t, first), encodeJSON(t, second), got, gotErr, want, wantErr)
			}
		}
	}
	t.Logf("%d second applies skipped the prune, %d succeeded", skipped, succeeded)
	if skipped < 100 {
		t.Errorf("only %d second applies skipped the prune", skipped)
	}
}

// skipsPrune says whether applying second over first, both by one
// manager, skips the prune.
func skipsPrune(r *Resource, first, second map[string]any) bool {
	ct, err := r.typ.Typed(second)
	if err != nil {
		return false
	}
	live, err := r.Apply(nil, first, "m", false)
	if err != nil {
		return false
	}
	list, _ := metadata(live)["managedFields"].([]any)
	m, err := Decode(list)
	return err == nil && r.keepsApplied(m.Fields, ident{Manager: "m", Operation: OpApply}.key(), ct)
}

// errText is err's message with its lines sorted: the library lists the
// errors of one object in map order.
func errText(err error) string {
	if err == nil {
		return ""
	}
	lines := strings.Split(err.Error(), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// merged is a copy of a with b's members added where a lacks them, and,
// when sameFields, b's scalar values put in place of a's.
func merged(a, b map[string]any, sameFields bool) map[string]any {
	out := maps.Clone(a)
	for k, bv := range b {
		av, ok := out[k]
		switch {
		case !ok && !sameFields:
			out[k] = bv
		case ok:
			am, aIsMap := av.(map[string]any)
			bm, bIsMap := bv.(map[string]any)
			switch {
			case aIsMap && bIsMap:
				out[k] = merged(am, bm, sameFields)
			case !aIsMap && !bIsMap && sameFields && k != "apiVersion" && k != "kind":
				if _, isList := av.([]any); !isList {
					out[k] = bv
				}
			}
		}
	}
	return out
}
