package server_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestKubectlQuota: kubectl create quota gets a status shortly after, and
// a create beyond it is refused with upstream's words.
func TestKubectlQuota(t *testing.T) {
	t.Parallel()
	k := newKubectlEnv(t)
	k.must(t, "create", "quota", "q", "--hard=pods=2,requests.cpu=1,count/configmaps=3")
	// The root CA publisher may have written its config map already: the
	// usage counted first is not known here.
	eventually(t, "the quota's status", func() bool {
		_, q := k.apiGet(t, "/api/v1/namespaces/default/resourcequotas/q")
		return path(q, "status.used.count/configmaps") != nil
	})
	for i := 0; ; i++ {
		_, errOut, err := k.run(t, "create", "configmap", fmt.Sprintf("c%d", i))
		if err == nil {
			if i > 3 {
				t.Fatalf("%d config maps created against count/configmaps=3", i+1)
			}
			continue
		}
		want := `error: failed to create configmap: configmaps "c` + fmt.Sprint(i) + `" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=3, limited: count/configmaps=3`
		if strings.TrimSpace(errOut) != want {
			t.Errorf("refusal:\n got  %s\n want %s", strings.TrimSpace(errOut), want)
		}
		break
	}
	out := k.must(t, "describe", "quota", "q")
	for _, line := range []string{"count/configmaps  3     3", "pods              0     2", "requests.cpu      0     1"} {
		if !strings.Contains(out, line) {
			t.Errorf("describe lacks %q:\n%s", line, out)
		}
	}
}
