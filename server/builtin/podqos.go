package builtin

import (
	"math/big"

	"platd/server/schema"
)

// Quality-of-service classes of a pod.
const (
	qosGuaranteed = "Guaranteed"
	qosBurstable  = "Burstable"
	qosBestEffort = "BestEffort"
)

// podQOSClass computes a pod's quality-of-service class from its
// containers and init containers (ephemeral ones have no resources):
// BestEffort without any cpu or memory request or limit; Guaranteed when
// every container limits both and requests equal limits; else Burstable.
// Only positive amounts count.
func podQOSClass(spec map[string]any) string {
	// Sums by resource, in qosResources order.
	var requests, limits [2]qosSum
	guaranteed := true
	for _, kind := range []string{"containers", "initContainers"} {
		for _, c := range mapsOf(spec[kind]) {
			res := mapOf(c["resources"])
			addQOSAmounts(&requests, mapOf(res["requests"]))
			if found := addQOSAmounts(&limits, mapOf(res["limits"])); !found[0] || !found[1] {
				guaranteed = false
			}
		}
	}
	nreq, nlim := 0, 0
	for i := range qosResources {
		if requests[i].set {
			nreq++
		}
		if limits[i].set {
			nlim++
		}
	}
	if nreq == 0 && nlim == 0 {
		return qosBestEffort
	}
	if guaranteed {
		for i := range qosResources {
			if requests[i].set && (!limits[i].set || !limits[i].equal(&requests[i])) {
				guaranteed = false
				break
			}
		}
	}
	if guaranteed && nreq == nlim {
		return qosGuaranteed
	}
	return qosBurstable
}

// qosSum is a sum of amounts in nanos: an int64 while it fits, else a
// big.Int. Pods' amounts nearly always fit, and are then summed without
// allocating.
type qosSum struct {
	set   bool
	small int64
	big   *big.Int // the sum once it no longer fits small
}

// add adds n, a shared amount that must not be changed.
func (s *qosSum) add(n *big.Int) {
	s.set = true
	if s.big == nil && n.IsInt64() {
		x := n.Int64()
		if sum := s.small + x; (sum > s.small) == (x > 0) {
			s.small = sum
			return
		}
	}
	if s.big == nil {
		s.big = big.NewInt(s.small)
	}
	s.big.Add(s.big, n)
}

func (s *qosSum) value() *big.Int {
	if s.big != nil {
		return s.big
	}
	return big.NewInt(s.small)
}

func (s *qosSum) equal(o *qosSum) bool {
	if s.big == nil && o.big == nil {
		return s.small == o.small
	}
	return s.value().Cmp(o.value()) == 0
}

// addQOSAmounts adds the positive cpu and memory amounts of list to sums
// and reports which it found.
func addQOSAmounts(sums *[2]qosSum, list map[string]any) (found [2]bool) {
	for i, name := range qosResources {
		q, ok := schema.AmountOf(list[name])
		if !ok || q.Sign() <= 0 {
			continue
		}
		found[i] = true
		sums[i].add(q.Nanos())
	}
	return found
}
