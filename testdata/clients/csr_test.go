package clients

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
)

// TestCSRSigningWithClientGo requests a client certificate the way
// client-go's certificate manager does (util/certificate/csr), approves
// it as `kubectl certificate approve` does, waits for the certificate
// with client-go's watch, and authenticates with it.
func TestCSRSigningWithClientGo(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cs := clientset(t, config(t))
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("csr-user-%d", time.Now().UnixNano()%100000)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: user, Organization: []string{"csr-group"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csrPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	lifetime := time.Hour
	name, uid, err := csr.RequestCertificate(cs, csrPEM, user, certificatesv1.KubeAPIServerClientSignerName, &lifetime,
		[]certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}, key)
	if err != nil {
		t.Fatalf("requesting the certificate: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	req, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	req.Status.Conditions = append(req.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "KubectlApprove", Message: "approved by the test",
	})
	if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, req, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("approving: %v", err)
	}
	certPEM, err := csr.WaitForCertificate(ctx, cs, name, uid)
	if err != nil {
		t.Fatalf("waiting for the certificate: %v", err)
	}

	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: cluster.config.Host, TLSClientConfig: rest.TLSClientConfig{CAData: cluster.config.CAData, CAFile: cluster.config.CAFile, CertData: certPEM, KeyData: keyPEM}}
	review, err := clientset(t, cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("asking who the certificate is: %v", err)
	}
	if got := review.Status.UserInfo; got.Username != user || len(got.Groups) != 2 || got.Groups[0] != "csr-group" {
		t.Errorf("authenticated as %+v, want %s in csr-group", got, user)
	}
}
