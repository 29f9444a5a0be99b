package controllers

import (
	"testing"
	"time"
)

func TestApprovalRetryDelay(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{
		{1, 200 * time.Millisecond},
		{2, 400 * time.Millisecond},
		{3, 800 * time.Millisecond},
		{13, 200 * time.Millisecond << 12},
		{14, 1000 * time.Second},
		{100, 1000 * time.Second},
		{1 << 30, 1000 * time.Second},
	} {
		if got := approvalRetryDelay(tc.n); got != tc.want {
			t.Errorf("approvalRetryDelay(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
}
