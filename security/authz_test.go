package security

import (
	"context"
	"errors"
	"testing"
)

func TestChain(t *testing.T) {
	t.Parallel()
	errA := errors.New("webhook down")
	errB := errors.New("rbac lookup failed")
	fixed := func(d Decision, reason string, err error) Authorizer {
		return AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) { return d, reason, err })
	}
	never := AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) {
		panic("authorizer after a final decision was asked")
	})
	alice := &User{Name: "alice", Groups: []string{"dev", AllAuthenticated}}
	root := &User{Name: "root", Groups: []string{SystemPrivilegedGroup, AllAuthenticated}}

	tests := []struct {
		name       string
		user       *User
		chain      []Authorizer
		want       Decision
		wantReason string
		wantErrs   []error
	}{
		{name: "masters bypass before any authorizer", user: root, chain: []Authorizer{fixed(DecisionDeny, "no", nil), never}, want: DecisionAllow},
		{name: "masters bypass with AlwaysDeny", user: root, chain: []Authorizer{AlwaysDeny{}}, want: DecisionAllow},
		{name: "empty chain has no opinion", user: alice, want: DecisionNoOpinion},
		{name: "nil user is not privileged", user: nil, chain: []Authorizer{AlwaysDeny{}}, want: DecisionNoOpinion, wantReason: AlwaysDenyReason},
		{name: "AlwaysAllow", user: alice, chain: []Authorizer{AlwaysAllow{}}, want: DecisionAllow},
		{name: "AlwaysDeny gives its reason", user: alice, chain: []Authorizer{AlwaysDeny{}}, want: DecisionNoOpinion, wantReason: "Everything is forbidden."},
		{name: "first allow is final", user: alice, chain: []Authorizer{fixed(DecisionNoOpinion, "", nil), fixed(DecisionAllow, "rbac: bound", nil), never}, want: DecisionAllow, wantReason: "rbac: bound"},
		{name: "first deny is final", user: alice, chain: []Authorizer{fixed(DecisionDeny, "node says no", nil), never}, want: DecisionDeny, wantReason: "node says no"},
		{name: "deny carries its error", user: alice, chain: []Authorizer{fixed(DecisionNoOpinion, "", errB), fixed(DecisionDeny, "", errA)}, want: DecisionDeny, wantErrs: []error{errA}},
		{name: "all no opinion joins reasons and errors", user: alice, chain: []Authorizer{fixed(DecisionNoOpinion, "r1", errA), fixed(DecisionNoOpinion, "", nil), fixed(DecisionNoOpinion, "r2", errB)}, want: DecisionNoOpinion, wantReason: "r1\nr2", wantErrs: []error{errA, errB}},
		{name: "all no opinion without reasons", user: alice, chain: []Authorizer{fixed(DecisionNoOpinion, "", nil)}, want: DecisionNoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, reason, err := NewChain(tt.chain...).Authorize(context.Background(), Attributes{User: tt.user, Verb: "get", Path: "/"})
			if d != tt.want || reason != tt.wantReason {
				t.Fatalf("got %v %q, want %v %q", d, reason, tt.want, tt.wantReason)
			}
			if len(tt.wantErrs) == 0 && err != nil {
				t.Fatalf("err = %v, want nil", err)
			}
			for _, w := range tt.wantErrs {
				if !errors.Is(err, w) {
					t.Fatalf("err = %v, want it to include %v", err, w)
				}
			}
		})
	}
}

func TestDecisionString(t *testing.T) {
	t.Parallel()
	for d, want := range map[Decision]string{DecisionAllow: "allow", DecisionDeny: "deny", DecisionNoOpinion: "no opinion"} {
		if got := d.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", d, got, want)
		}
	}
}
