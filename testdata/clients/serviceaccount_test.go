package clients

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// rotationWatchSeconds ends the rotation test's watches quickly, so that
// its reflector lists and watches again with whatever token the file
// holds by then.
const rotationWatchSeconds = 2

// tokenFilePeriod is how long client-go keeps a token read from
// BearerTokenFile before reading the file again.
const tokenFilePeriod = time.Minute

// reflectorMaxBackoff is the longest a client-go reflector waits between
// failed lists: 30 s, jittered up to twice that.
const reflectorMaxBackoff = time.Minute

// tokenFor asks the TokenRequest API for a token of ns/sa, bound to the
// named secret when bound is not "".
func tokenFor(t *testing.T, cs kubernetes.Interface, ns, sa, bound string) string {
	t.Helper()
	tr := &authenticationv1.TokenRequest{}
	if bound != "" {
		s, err := cs.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: bound}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tr.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: bound, UID: s.UID}
	}
	res, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa, tr, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	if res.Status.Token == "" || res.Status.ExpirationTimestamp.Before(&metav1.Time{Time: time.Now().Add(50 * time.Minute)}) {
		t.Fatalf("TokenRequest status = %+v", res.Status)
	}
	return res.Status.Token
}

// inCluster returns the configuration a pod's client builds: the server,
// the CA from the namespace's root CA ConfigMap, and a token file.
func inCluster(t *testing.T, cs kubernetes.Interface, ns, tokenFile string) *rest.Config {
	t.Helper()
	var ca string
	waitFor(t, "the root CA ConfigMap", func() bool {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "kube-root-ca.crt", metav1.GetOptions{})
		if err != nil {
			return false
		}
		ca = cm.Data["ca.crt"]
		return ca != ""
	})
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, []byte(ca), 0o600); err != nil {
		t.Fatal(err)
	}
	return &rest.Config{Host: cluster.config.Host, BearerTokenFile: tokenFile, TLSClientConfig: rest.TLSClientConfig{CAFile: caFile}}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func writeToken(t *testing.T, path, token string) {
	t.Helper()
	// Renamed into place, as the kubelet's atomic writer does.
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestInClusterClientWithTokenRequest(t *testing.T) {
	admin := clientset(t, jsonConfig(t))
	ns := namespace(t, admin)
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindRole(t, admin, ns, "app", readConfigMaps)
	tokenFile := filepath.Join(t.TempDir(), "token")
	writeToken(t, tokenFile, tokenFor(t, admin, ns, "app", ""))
	app := clientset(t, inCluster(t, admin, ns, tokenFile))
	if _, err := app.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatalf("listing as the service account: %v", err)
	}
	r, err := app.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case apierrors.IsNotFound(err):
		t.Log("SelfSubjectReview not served yet")
	case err != nil:
		t.Fatal(err)
	case r.Status.UserInfo.Username != "system:serviceaccount:"+ns+":app":
		t.Errorf("whoami = %+v", r.Status.UserInfo)
	}
	// Deleting the account revokes the token.
	if err := admin.CoreV1().ServiceAccounts(ns).Delete(context.Background(), "app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := app.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("after the account's deletion: %v, want Unauthorized", err)
	}
}

// A reflector keeps its store current while the token in its file is
// replaced and the old one revoked, as when the kubelet rotates a
// projected token.
func TestReflectorSurvivesTokenRotation(t *testing.T) {
	admin := clientset(t, jsonConfig(t))
	ns := namespace(t, admin)
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "watcher"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindRole(t, admin, ns, "watcher", readConfigMaps)
	tokenFile := filepath.Join(t.TempDir(), "token")
	writeToken(t, tokenFile, tokenFor(t, admin, ns, "watcher", "anchor-1"))
	app := clientset(t, inCluster(t, admin, ns, tokenFile))
	var watches atomic.Int64
	lw := &cache.ListWatch{
		ListFunc: func(o metav1.ListOptions) (runtime.Object, error) {
			return app.CoreV1().ConfigMaps(ns).List(context.Background(), o)
		},
		WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
			timeout := int64(rotationWatchSeconds)
			o.TimeoutSeconds = &timeout
			w, err := app.CoreV1().ConfigMaps(ns).Watch(context.Background(), o)
			if err == nil {
				watches.Add(1)
			}
			return w, err
		},
	}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cache.NewReflector(lw, &corev1.ConfigMap{}, store, 0).Run(ctx.Done())
	has := func(name string) func() bool {
		return func() bool { _, ok, _ := store.GetByKey(ns + "/" + name); return ok }
	}
	create := func(name string) {
		if _, err := admin.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("before")
	waitFor(t, "the first ConfigMap in the reflector's store", has("before"))

	// Rotate: a new token in the file, the old one revoked.
	old, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	writeToken(t, tokenFile, tokenFor(t, admin, ns, "watcher", "anchor-2"))
	if err := admin.CoreV1().Secrets(ns).Delete(context.Background(), "anchor-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	oldCfg := inCluster(t, admin, ns, "")
	oldCfg.BearerToken = string(old)
	if _, err := clientset(t, oldCfg).CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("the revoked token: %v, want Unauthorized", err)
	}
	newCfg := inCluster(t, admin, ns, tokenFile)
	if _, err := clientset(t, newCfg).CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatalf("the new token: %v", err)
	}
	// client-go reads a token file again once its copy is a minute old
	// (not on a 401): until then the reflector's requests fail, then, at
	// its next try after a backoff, it lists and watches with the new
	// token and catches up.
	rotated := watches.Load()
	deadline := time.Now().Add(tokenFilePeriod + reflectorMaxBackoff + waitTimeout)
	for watches.Load() < rotated+2 {
		if time.Now().After(deadline) {
			t.Fatal("the reflector did not watch again with the rotated token")
		}
		time.Sleep(100 * time.Millisecond)
	}
	create("after")
	waitFor(t, "a ConfigMap created after the rotation in the reflector's store", has("after"))
	if _, err := app.CoreV1().ConfigMaps(ns).Get(context.Background(), "after", metav1.GetOptions{}); err != nil {
		t.Errorf("a request with the rotated token: %v", err)
	}
}
