//go:build linux

package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestKubectlWorkloads drives kubectl's workload commands: the generators
// (create deployment, job, cronjob), the scale subresource, set image, the
// printed columns and explain from the OpenAPI v3 documents.
func TestKubectlWorkloads(t *testing.T) {
	t.Parallel()
	k := newKubectlEnv(t)

	t.Run("deployment", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "namespace", "kc-deploy")
		if out := k.must(t, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "-n", "kc-deploy"); !strings.Contains(out, "deployment.apps/web created") {
			t.Fatalf("create deployment printed %q", out)
		}
		table := k.must(t, "get", "deploy", "-n", "kc-deploy")
		if !regexp.MustCompile(`^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nweb\s+0/2\s+0\s+0\s+\S+\n$`).MatchString(table) {
			t.Errorf("get deploy:\n%s", table)
		}
		wide := k.must(t, "get", "deployment", "web", "-o", "wide", "-n", "kc-deploy")
		if !regexp.MustCompile(`^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR\nweb\s+0/2\s+0\s+0\s+\S+\s+nginx\s+nginx:1\.27\s+app=web\n$`).MatchString(wide) {
			t.Errorf("get deploy -o wide:\n%s", wide)
		}

		if out := k.must(t, "scale", "deployment", "web", "--replicas=5", "-n", "kc-deploy"); !strings.Contains(out, "deployment.apps/web scaled") {
			t.Fatalf("scale printed %q", out)
		}
		_, d := k.apiGet(t, "/apis/apps/v1/namespaces/kc-deploy/deployments/web")
		if path(d, "spec.replicas") != float64(5) || path(d, "metadata.generation") != float64(2) {
			t.Errorf("after scale: replicas %v, generation %v", path(d, "spec.replicas"), path(d, "metadata.generation"))
		}
		// The scale subresource prints its own columns.
		if out := k.must(t, "get", "deployment", "web", "--subresource=scale", "-n", "kc-deploy"); !regexp.MustCompile(`^NAME\s+DESIRED\s+AVAILABLE\s+AGE\nweb\s+5\s+0\s+\S+\n$`).MatchString(out) {
			t.Errorf("get deployment --subresource=scale:\n%s", out)
		}

		if out := k.must(t, "set", "image", "deployment/web", "nginx=nginx:1.28", "-n", "kc-deploy"); !strings.Contains(out, "deployment.apps/web image updated") {
			t.Fatalf("set image printed %q", out)
		}
		_, d = k.apiGet(t, "/apis/apps/v1/namespaces/kc-deploy/deployments/web")
		c := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		if c["image"] != "nginx:1.28" || path(d, "metadata.generation") != float64(3) {
			t.Errorf("after set image: image %v, generation %v", c["image"], path(d, "metadata.generation"))
		}
		if out := k.must(t, "get", "all", "-n", "kc-deploy", "-o", "name"); !strings.Contains(out, "deployment.apps/web\n") {
			t.Errorf("get all lacks the deployment:\n%s", out)
		}
	})

	t.Run("get-all-namespaces-and-describe", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "namespace", "kc-mixed")
		k.must(t, "create", "deployment", "shop", "--image=nginx:1.27", "-n", "kc-mixed")
		k.must(t, "run", "cart", "--image=nginx:1.27", "--labels=app=cart", "-n", "kc-mixed")
		k.must(t, "expose", "pod", "cart", "--port=80", "-n", "kc-mixed")
		k.must(t, "create", "job", "report", "--image=busybox", "-n", "kc-mixed")
		// One table per kind, each with upstream's columns and a
		// NAMESPACE column in front.
		out := k.must(t, "get", "pods,deploy,svc,jobs", "-A")
		for _, want := range []string{
			`(?m)^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$`,
			`(?m)^kc-mixed\s+pod/cart\s+0/1\s+Pending\s+0\s+\S+$`,
			`(?m)^NAMESPACE\s+NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$`,
			`(?m)^kc-mixed\s+deployment\.apps/shop\s+0/1\s+0\s+0\s+\S+$`,
			`(?m)^NAMESPACE\s+NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$`,
			`(?m)^kc-mixed\s+service/cart\s+ClusterIP\s+10\.0\.0\.\d+\s+<none>\s+80/TCP\s+\S+$`,
			`(?m)^default\s+service/` + k.brand.APIServiceName + `\s+ClusterIP\s+10\.0\.0\.1\s+<none>\s+443/TCP\s+\S+$`,
			`(?m)^NAMESPACE\s+NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE$`,
			`(?m)^kc-mixed\s+job\.batch/report\s+\S+\s+0/1\s+\S*\s+\S+$`,
		} {
			if !regexp.MustCompile(want).MatchString(out) {
				t.Errorf("get pods,deploy,svc,jobs -A lacks %s:\n%s", want, out)
			}
		}
		wide := k.must(t, "get", "pods,svc", "-n", "kc-mixed", "-o", "wide")
		for _, want := range []string{
			`(?m)^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$`,
			`(?m)^pod/cart\s+0/1\s+Pending\s+0\s+\S+\s+<none>\s+<none>\s+<none>\s+<none>$`,
			`(?m)^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\s+SELECTOR$`,
			`(?m)^service/cart\s+ClusterIP\s+\S+\s+<none>\s+80/TCP\s+\S+\s+app=cart$`,
		} {
			if !regexp.MustCompile(want).MatchString(wide) {
				t.Errorf("get pods,svc -o wide lacks %s:\n%s", want, wide)
			}
		}
		// describe reads the object, its events (by field selector) and,
		// for a deployment, its replica sets.
		for _, c := range []struct {
			args []string
			want []string
		}{
			{[]string{"pod", "cart"}, []string{`(?m)^Name:\s+cart$`, `(?m)^Namespace:\s+kc-mixed$`, `(?m)^Status:\s+Pending$`, `(?m)^\s+Image:\s+nginx:1\.27$`, `(?m)^Events:\s+<none>$`}},
			{[]string{"deployment", "shop"}, []string{`(?m)^Name:\s+shop$`, `(?m)^Replicas:\s+1 desired`, `(?m)^StrategyType:\s+RollingUpdate$`, `(?m)^RollingUpdateStrategy:\s+25% max unavailable, 25% max surge$`}},
			{[]string{"service", "cart"}, []string{`(?m)^Name:\s+cart$`, `(?m)^Selector:\s+app=cart$`, `(?m)^Type:\s+ClusterIP$`, `(?m)^Port:\s+<unset>\s+80/TCP$`}},
		} {
			out := k.must(t, append([]string{"describe", "-n", "kc-mixed"}, c.args...)...)
			for _, want := range c.want {
				if !regexp.MustCompile(want).MatchString(out) {
					t.Errorf("describe %s lacks %s:\n%s", strings.Join(c.args, " "), want, out)
				}
			}
		}
	})

	t.Run("scale-others", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "namespace", "kc-scale")
		manifest := filepath.Join(t.TempDir(), "workloads.yaml")
		var b strings.Builder
		for _, kind := range []string{"apps/v1 StatefulSet db", "apps/v1 ReplicaSet rs", "v1 ReplicationController rc", "apps/v1 DaemonSet agent"} {
			f := strings.Fields(kind)
			sel := "{matchLabels: {app: " + f[2] + "}}"
			if f[1] == "ReplicationController" {
				sel = "{app: " + f[2] + "}"
			}
			fmt.Fprintf(&b, "---\napiVersion: %s\nkind: %s\nmetadata: {name: %s}\nspec:\n  selector: %s\n  template:\n    metadata: {labels: {app: %s}}\n    spec: {containers: [{name: c, image: busybox}]}\n", f[0], f[1], f[2], sel, f[2])
		}
		if err := os.WriteFile(manifest, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		k.must(t, "apply", "-f", manifest, "-n", "kc-scale")
		for _, target := range []struct{ ref, path string }{
			{"statefulset/db", "/apis/apps/v1/namespaces/kc-scale/statefulsets/db"},
			{"rs/rs", "/apis/apps/v1/namespaces/kc-scale/replicasets/rs"},
			{"rc/rc", "/api/v1/namespaces/kc-scale/replicationcontrollers/rc"},
		} {
			k.must(t, "scale", target.ref, "--replicas=3", "-n", "kc-scale")
			if _, o := k.apiGet(t, target.path); path(o, "spec.replicas") != float64(3) {
				t.Errorf("%s after scale: replicas %v", target.ref, path(o, "spec.replicas"))
			}
		}
		if _, errOut, err := k.run(t, "scale", "ds/agent", "--replicas=3", "-n", "kc-scale"); err == nil {
			t.Errorf("daemon sets scaled; stderr %q", errOut)
		}
		table := k.must(t, "get", "rc", "-n", "kc-scale")
		if !regexp.MustCompile(`^NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE\nrc\s+3\s+0\s+0\s+\S+\n$`).MatchString(table) {
			t.Errorf("get rc:\n%s", table)
		}
	})

	t.Run("job", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "namespace", "kc-job")
		if out := k.must(t, "create", "job", "j", "--image=busybox", "-n", "kc-job"); !strings.Contains(out, "job.batch/j created") {
			t.Fatalf("create job printed %q", out)
		}
		_, j := k.apiGet(t, "/apis/batch/v1/namespaces/kc-job/jobs/j")
		uid, _ := path(j, "metadata.uid").(string)
		sel := "batch." + k.brand.Label("controller-uid")
		if uid == "" {
			t.Fatalf("job without uid: %v", j)
		}
		ml, _ := path(j, "spec.selector.matchLabels").(map[string]any)
		if ml[sel] != uid || path(j, "spec.template.spec.restartPolicy") != "Never" || path(j, "spec.backoffLimit") != float64(6) {
			t.Errorf("job: selector %v, restartPolicy %v, backoffLimit %v", ml, path(j, "spec.template.spec.restartPolicy"), path(j, "spec.backoffLimit"))
		}
		table := k.must(t, "get", "jobs", "-n", "kc-job")
		if !regexp.MustCompile(`^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\nj\s+Running\s+0/1\s+\S+\n$`).MatchString(table) {
			t.Errorf("get jobs:\n%s", table)
		}
	})

	t.Run("cronjob", func(t *testing.T) {
		t.Parallel()
		k.must(t, "create", "namespace", "kc-cron")
		if out := k.must(t, "create", "cronjob", "c", "--image=busybox", "--schedule=*/5 * * * *", "-n", "kc-cron"); !strings.Contains(out, "cronjob.batch/c created") {
			t.Fatalf("create cronjob printed %q", out)
		}
		table := k.must(t, "get", "cj", "-n", "kc-cron")
		if !regexp.MustCompile(`^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\nc\s+\*/5 \* \* \* \*\s+<none>\s+False\s+0\s+<none>\s+\S+\n$`).MatchString(table) {
			t.Errorf("get cj:\n%s", table)
		}
		_, errOut, err := k.run(t, "create", "cronjob", "bad", "--image=busybox", "--schedule=* * *", "-n", "kc-cron")
		if err == nil || !strings.Contains(errOut, `spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]`) {
			t.Errorf("bad schedule: err %v, stderr %q", err, errOut)
		}
	})

	t.Run("explain", func(t *testing.T) {
		t.Parallel()
		out := k.must(t, "explain", "deployment.spec.strategy")
		for _, want := range []string{"GROUP:      apps", "KIND:       Deployment", "VERSION:    v1", "rollingUpdate\t<RollingUpdateDeployment>", "type\t<string>"} {
			if !strings.Contains(out, want) {
				t.Errorf("explain lacks %q:\n%s", want, out)
			}
		}
	})
}
