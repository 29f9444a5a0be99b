package config

import "time"

// Replicas holds what N platd replicas sharing one store need: the
// timings of the controllers' leader election and of the replicas'
// identity leases. The zero value means upstream's defaults (lease 15 s,
// renew deadline 10 s, retry 2 s; identity renewed every 10 s, listed in
// the API's endpoints for 15 s). With the bbolt engine, whose file one
// process owns, none of it is used. No flag sets them (kube-apiserver has
// none); tests shorten them.
type Replicas struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	IdentityRenewInterval, EndpointTTL        time.Duration
	// Hostname names this replica in its leader-election identity and
	// identity lease; "" is the host's name. Servers in one process
	// (tests) need different ones.
	Hostname string
}
