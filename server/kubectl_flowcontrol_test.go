//go:build linux

package server_test

import (
	"reflect"
	"strings"
	"testing"
)

// TestKubectlFlowControl lists the bootstrap flow control objects with
// kubectl and checks upstream's columns: flow schemas by matching
// precedence, priority levels by name.
func TestKubectlFlowControl(t *testing.T) {
	t.Parallel()
	k := newKubectlEnv(t)
	bootstrapFlowControl(t, k.brand, func(method, path string, body []byte) (int, []byte) {
		code, out, err := k.proc.do(method, path, body)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return code, out
	})

	out := k.must(t, "get", "flowschemas")
	want := [][]string{
		{"NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"},
		{"exempt", "exempt", "1", "<none>"},
		{"probes", "exempt", "2", "<none>"},
		{"system-leader-election", "leader-election", "100", "ByUser"},
		{"endpoint-controller", "workload-high", "150", "ByUser"},
		{"workload-leader-election", "leader-election", "200", "ByUser"},
		{"system-node-high", "node-high", "400", "ByUser"},
		{"system-nodes", "system", "500", "ByUser"},
		{"kube-controller-manager", "workload-high", "800", "ByNamespace"},
		{"kube-scheduler", "workload-high", "800", "ByNamespace"},
		{k.brand.SystemNamespace + "-service-accounts", "workload-high", "900", "ByNamespace"},
		{"service-accounts", "workload-low", "9000", "ByUser"},
		{"global-default", "global-default", "9900", "ByUser"},
		{"catch-all", "catch-all", "10000", "ByUser"},
	}
	checkColumns(t, "get flowschemas", out, want)
	// The server says of each schema whether its priority level is
	// missing, in the last column.
	eventually(t, "MISSINGPL False for every schema", func() bool {
		rows := strings.Split(strings.TrimRight(k.must(t, "get", "flowschemas", "--no-headers"), "\n"), "\n")
		for _, row := range rows {
			if cells := strings.Fields(row); len(cells) == 0 || cells[len(cells)-1] != "False" {
				return false
			}
		}
		return len(rows) == len(want)-1
	})

	out = k.must(t, "get", "prioritylevelconfigurations")
	want = [][]string{
		{"NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE", "QUEUELENGTHLIMIT", "AGE"},
		{"catch-all", "Limited", "5", "<none>", "<none>", "<none>"},
		{"exempt", "Exempt", "<none>", "<none>", "<none>", "<none>"},
		{"global-default", "Limited", "20", "128", "6", "50"},
		{"leader-election", "Limited", "10", "16", "4", "50"},
		{"node-high", "Limited", "40", "64", "6", "50"},
		{"system", "Limited", "30", "64", "6", "50"},
		{"workload-high", "Limited", "40", "128", "6", "50"},
		{"workload-low", "Limited", "100", "128", "6", "50"},
	}
	checkColumns(t, "get prioritylevelconfigurations", out, want)
}

// checkColumns compares kubectl's table with the leading cells of each
// wanted row; later cells (ages, conditions a controller sets) are not
// compared.
func checkColumns(t *testing.T, what, out string, want [][]string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%s: %d lines, want %d:\n%s", what, len(lines), len(want), out)
	}
	for i, line := range lines {
		cells := strings.Fields(line)
		if len(cells) < len(want[i]) || !reflect.DeepEqual(cells[:len(want[i])], want[i]) {
			t.Errorf("%s line %d: %q, want it to start with %q", what, i, line, want[i])
		}
	}
}
