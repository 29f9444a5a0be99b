package builtin

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"platd/server/schema"
)

// qosClassBig is the class computed with every sum a big.Int, as the
// definition reads: TestPodQOSClassSums holds podQOSClass to it.
func qosClassBig(spec map[string]any) string {
	requests, limits := map[string]*big.Int{}, map[string]*big.Int{}
	add := func(sums map[string]*big.Int, list map[string]any) map[string]bool {
		found := map[string]bool{}
		for _, name := range qosResources {
			q, ok := schema.AmountOf(list[name])
			if !ok || q.Sign() <= 0 {
				continue
			}
			found[name] = true
			if sums[name] == nil {
				sums[name] = new(big.Int)
			}
			sums[name].Add(sums[name], q.Nanos())
		}
		return found
	}
	guaranteed := true
	for _, kind := range []string{"containers", "initContainers"} {
		for _, c := range mapsOf(spec[kind]) {
			res := mapOf(c["resources"])
			add(requests, mapOf(res["requests"]))
			found := add(limits, mapOf(res["limits"]))
			if !found["cpu"] || !found["memory"] {
				guaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return qosBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
				break
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return qosGuaranteed
	}
	return qosBurstable
}

// TestPodQOSClassSums: random pods, with amounts from tiny to past what
// an int64 of nanos holds, classed as with big sums throughout.
func TestPodQOSClassSums(t *testing.T) {
	amounts := []any{"0", "-1", "1", "100m", "250m", "1n", "2", "512Mi", "1Gi", "8E", "9E", "9223372036", "9223372037", "5e18", int64(3), int64(0), "x", nil}
	rng := rand.New(rand.NewPCG(5, 6))
	list := func() map[string]any {
		m := map[string]any{}
		for _, name := range qosResources {
			if v := amounts[rng.IntN(len(amounts))]; v != nil {
				m[name] = v
			}
		}
		return m
	}
	counts := map[string]int{}
	for range 20000 {
		spec := map[string]any{}
		for _, kind := range []string{"containers", "initContainers"} {
			var cs []any
			for range rng.IntN(3) {
				res := map[string]any{}
				if rng.IntN(4) > 0 {
					res["requests"] = list()
				}
				if rng.IntN(4) > 0 {
					if rng.IntN(2) == 0 {
						res["limits"] = res["requests"]
					} else {
						res["limits"] = list()
					}
				}
				cs = append(cs, map[string]any{"name": "c", "resources": res})
			}
			if cs != nil {
				spec[kind] = cs
			}
		}
		got, want := podQOSClass(spec), qosClassBig(spec)
		if got != want {
			t.Fatalf("%v: class %s, want %s", spec, got, want)
		}
		counts[got]++
	}
	for _, c := range []string{qosBestEffort, qosBurstable, qosGuaranteed} {
		if counts[c] < 100 {
			t.Errorf("only %d pods of class %s: %v", counts[c], c, counts)
		}
	}
}
