package clients

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// bindRole grants the service account ns/sa the rules in ns through a Role
// and RoleBinding named after it, and waits until the server's authorizer
// allows the first rule.
func bindRole(t *testing.T, admin kubernetes.Interface, ns, sa string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: sa}, Rules: rules}
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: sa},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := rules[0]
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + ns + ":" + sa,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: first.Verbs[0], Group: first.APIGroups[0], Resource: first.Resources[0],
		},
	}}
	waitFor(t, "the role binding in force", func() bool {
		res, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		return err == nil && res.Status.Allowed
	})
}

// readConfigMaps is the rule of the service-account tests that only read
// config maps.
var readConfigMaps = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}

// A controller running as a service account with a Role: its informer
// syncs, its granted writes succeed, and everything else is refused with
// upstream's Forbidden answers.
func TestControllerAsServiceAccount(t *testing.T) {
	admin := clientset(t, jsonConfig(t))
	ctx := context.Background()
	ns := namespace(t, admin)
	other := namespace(t, admin)
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "operator"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindRole(t, admin, ns, "operator",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update"}},
		rbacv1.PolicyRule{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}, Verbs: []string{"create"}},
	)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(tokenFor(t, admin, ns, "operator", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	op := clientset(t, inCluster(t, admin, ns, tokenFile))
	user := "system:serviceaccount:" + ns + ":operator"

	// The controller: an informer on its namespace's config maps that
	// answers each "request-*" map with a "reply-*" map.
	factory := informers.NewSharedInformerFactoryWithOptions(op, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		cm := obj.(*corev1.ConfigMap)
		if !strings.HasPrefix(cm.Name, "request-") {
			return
		}
		reply := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "reply-" + strings.TrimPrefix(cm.Name, "request-")}, Data: cm.Data}
		if _, err := op.CoreV1().ConfigMaps(ns).Create(context.Background(), reply, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Errorf("the controller's reply: %v", err)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() {
		close(stop)
		factory.Shutdown()
	}()
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("the service account's informer did not sync")
	}
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "request-1"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the controller's reply", func() bool {
		cm, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, "reply-1", metav1.GetOptions{})
		return err == nil && cm.Data["k"] == "v"
	})

	forbidden := []struct {
		name string
		call func() error
		msg  string
	}{
		{"secrets are not granted", func() error {
			_, err := op.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
			return err
		}, fmt.Sprintf(`secrets is forbidden: User %q cannot list resource "secrets" in API group "" in the namespace %q`, user, ns)},
		{"delete is not granted", func() error {
			return op.CoreV1().ConfigMaps(ns).Delete(ctx, "reply-1", metav1.DeleteOptions{})
		}, fmt.Sprintf(`configmaps "reply-1" is forbidden: User %q cannot delete resource "configmaps" in API group "" in the namespace %q`, user, ns)},
		{"another namespace", func() error {
			_, err := op.CoreV1().ConfigMaps(other).List(ctx, metav1.ListOptions{})
			return err
		}, fmt.Sprintf(`configmaps is forbidden: User %q cannot list resource "configmaps" in API group "" in the namespace %q`, user, other)},
		{"cluster scope", func() error {
			_, err := op.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			return err
		}, fmt.Sprintf(`namespaces is forbidden: User %q cannot list resource "namespaces" in API group "" at the cluster scope`, user)},
		{"a role granting more than it holds", func() error {
			r := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "wider"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}
			_, err := op.RbacV1().Roles(ns).Create(ctx, r, metav1.CreateOptions{})
			return err
		}, fmt.Sprintf(`roles.%s "wider" is forbidden: user %q (groups=["system:serviceaccounts" "system:serviceaccounts:%s" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:`+"\n"+`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`, rbacv1.GroupName, user, ns)},
	}
	for _, f := range forbidden {
		err := f.call()
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", f.name, err)
			continue
		}
		if got := err.(apierrors.APIStatus).Status().Message; got != f.msg {
			t.Errorf("%s:\n got  %s\n want %s", f.name, got, f.msg)
		}
	}
	// A role within what it holds is allowed.
	narrower := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "narrower"}, Rules: []rbacv1.PolicyRule{readConfigMaps}}
	if _, err := op.RbacV1().Roles(ns).Create(ctx, narrower, metav1.CreateOptions{}); err != nil {
		t.Errorf("a role within its own rules: %v", err)
	}

	// It asks what it may do as upstream answers.
	ssar, err := op.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "update", Resource: "configmaps"},
	}}, metav1.CreateOptions{})
	wantReason := fmt.Sprintf(`RBAC: allowed by RoleBinding "operator/%s" of Role "operator" to ServiceAccount "operator/%s"`, ns, ns)
	if err != nil || !ssar.Status.Allowed || ssar.Status.Reason != wantReason {
		t.Errorf("self access review: %v %+v, want allowed with %q", err, ssar.Status, wantReason)
	}
	ssar, err = op.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "secrets"},
	}}, metav1.CreateOptions{})
	if err != nil || ssar.Status.Allowed || ssar.Status.Denied {
		t.Errorf("self access review of secrets: %v %+v, want not allowed", err, ssar.Status)
	}
}
