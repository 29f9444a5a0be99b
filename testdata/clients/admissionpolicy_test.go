package clients

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionregistrationclient "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
)

// TestPolicyTypeChecking is upstream's conformance check of the policy
// status controller, through the typed client in both encodings: a
// policy's status.typeChecking appears once its expressions are checked,
// empty for expressions that fit the Deployment schema, with a warning
// each for a confused expression and messageExpression.
func TestPolicyTypeChecking(t *testing.T) {
	t.Parallel()
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			t.Parallel()
			policies := clientset(t, answeredIn(t, enc.config(t), enc.mediaType)).AdmissionregistrationV1().ValidatingAdmissionPolicies()
			unique := fmt.Sprintf("typecheck-%s-%d", enc.name, time.Now().UnixNano()%100000)

			correct := typeCheckedPolicy(t, policies, unique+".correct.example.com", admissionregistrationv1.Validation{Expression: "object.spec.replicas > 1"})
			if ws := correct.Status.TypeChecking.ExpressionWarnings; len(ws) != 0 {
				t.Errorf("a correct policy has warnings: %v", ws)
			}

			confused := typeCheckedPolicy(t, policies, unique+".confused.example.com", admissionregistrationv1.Validation{
				Expression:        "object.spec.replicas > '1'",
				MessageExpression: "'wants replicas > 1, got ' + object.spec.replicas",
			})
			ws := confused.Status.TypeChecking.ExpressionWarnings
			if len(ws) != 2 {
				t.Fatalf("warnings %v, want 2", ws)
			}
			for i, want := range []struct{ field, text string }{
				{"spec.validations[0].expression", "found no matching overload for '_>_' applied to '(int, string)'"},
				{"spec.validations[0].messageExpression", "found no matching overload for '_+_' applied to '(string, int)'"},
			} {
				if ws[i].FieldRef != want.field || !strings.Contains(ws[i].Warning, want.text) || !strings.HasPrefix(ws[i].Warning, "apps/v1, Kind=Deployment: ") {
					t.Errorf("warning %d: %+v, want %s with %q", i, ws[i], want.field, want.text)
				}
			}
			if confused.Status.ObservedGeneration != confused.Generation {
				t.Errorf("observedGeneration %d of generation %d", confused.Status.ObservedGeneration, confused.Generation)
			}
		})
	}
}

// typeCheckedPolicy creates a policy on deployments of namespaces labelled
// with its own name (so that nothing it might bind to is touched) and
// waits for its type checking.
func typeCheckedPolicy(t *testing.T, policies admissionregistrationclient.ValidatingAdmissionPolicyInterface, name string, v admissionregistrationv1.Validation) *admissionregistrationv1.ValidatingAdmissionPolicy {
	t.Helper()
	ctx := context.Background()
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{name: "true"}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				}}},
			},
			Validations: []admissionregistrationv1.Validation{v},
		},
	}
	if _, err := policies.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating policy %s: %v", name, err)
	}
	t.Cleanup(func() { _ = policies.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	var got *admissionregistrationv1.ValidatingAdmissionPolicy
	eventually(t, "the type checking of "+name, func() bool {
		var err error
		got, err = policies.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading policy %s: %v", name, err)
		}
		return got.Status.TypeChecking != nil
	})
	return got
}
