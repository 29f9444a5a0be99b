package builtin

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"slices"
	"testing"

	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
)

// signerAuthorizer allows verbs on the signers named, and records every
// question it is asked.
type signerAuthorizer struct {
	allow map[string][]string // verb → signer names
	asked *[]security.Attributes
}

func (s signerAuthorizer) Authorize(_ context.Context, a security.Attributes) (security.Decision, string, error) {
	*s.asked = append(*s.asked, a)
	if a.Resource == "signers" && slices.Contains(s.allow[a.Verb], a.Name) {
		return security.DecisionAllow, "", nil
	}
	return security.DecisionNoOpinion, "", nil
}

func TestCSRAdmission(t *testing.T) {
	g := brand.Group("certificates")
	alice := registry.Requester{Name: "alice", Groups: []string{"system:authenticated"}}
	admin := registry.Requester{Name: "admin", Groups: []string{security.SystemPrivilegedGroup}}
	csr := func(signer string, status map[string]any) registry.Object {
		return registry.Object{"metadata": map[string]any{"name": "c3"},
			"spec": map[string]any{"signerName": signer}, "status": status}
	}
	approved := map[string]any{"conditions": []any{map[string]any{"type": "Approved", "status": "True"}}}
	forbidden := func(msg string) string {
		return fmt.Sprintf(`certificatesigningrequests.%s "c3" is forbidden: %s`, g, msg)
	}
	for _, c := range []struct {
		name     string
		who      registry.Requester
		allow    map[string][]string
		sub      string
		obj, old registry.Object
		want     string
		asked    []string // the signer names asked about, in order
	}{
		{"approve by name", alice, map[string][]string{"approve": {"example.com/foo"}}, "approval",
			csr("example.com/foo", approved), csr("example.com/foo", nil), "", []string{"example.com/foo"}},
		{"approve by domain", alice, map[string][]string{"approve": {"example.com/*"}}, "approval",
			csr("example.com/foo", approved), csr("example.com/foo", nil), "", []string{"example.com/foo", "example.com/*"}},
		{"approve refused", alice, map[string][]string{"sign": {"example.com/foo"}}, "approval",
			csr("example.com/foo", approved), csr("example.com/foo", nil),
			forbidden(`user not permitted to approve requests with signerName "example.com/foo"`), []string{"example.com/foo", "example.com/*"}},
		{"approve checked on an unchanged request", alice, nil, "approval",
			csr("example.com/foo", approved), csr("example.com/foo", approved),
			forbidden(`user not permitted to approve requests with signerName "example.com/foo"`), []string{"example.com/foo", "example.com/*"}},
		{"approve checks the stored signer", alice, map[string][]string{"approve": {"example.com/foo"}}, "approval",
			csr("example.com/foo", approved), csr("other.example/bar", nil),
			forbidden(`user not permitted to approve requests with signerName "other.example/bar"`), []string{"other.example/bar", "other.example/*"}},
		{"sign", alice, map[string][]string{"sign": {"example.com/*"}}, "status",
			csr("example.com/foo", map[string]any{"certificate": "Y2VydA=="}), csr("example.com/foo", approved), "", []string{"example.com/foo", "example.com/*"}},
		{"sign refused", alice, map[string][]string{"approve": {"example.com/foo"}}, "status",
			csr("example.com/foo", map[string]any{"certificate": "Y2VydA=="}), csr("example.com/foo", approved),
			forbidden(`user not permitted to sign requests with signerName "example.com/foo"`), []string{"example.com/foo", "example.com/*"}},
		{"empty certificate is a change", alice, nil, "status",
			csr("example.com/foo", map[string]any{"certificate": ""}), csr("example.com/foo", approved),
			forbidden(`user not permitted to sign requests with signerName "example.com/foo"`), []string{"example.com/foo", "example.com/*"}},
		{"status without a new certificate", alice, nil, "status",
			csr("example.com/foo", map[string]any{"certificate": "Y2VydA==", "conditions": []any{map[string]any{"type": "Failed"}}}),
			csr("example.com/foo", map[string]any{"certificate": "Y2VydA=="}), "", nil},
		{"null certificate is none", alice, nil, "status",
			csr("example.com/foo", map[string]any{"certificate": nil}), csr("example.com/foo", nil), "", nil},
		{"masters approve", admin, nil, "approval", csr("example.com/foo", approved), csr("example.com/foo", nil), "", nil},
		{"main resource update", alice, nil, "", csr("example.com/foo", nil), csr("example.com/foo", nil), "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var asked []security.Attributes
			a := csrAdmission{group: g, resource: "certificatesigningrequests",
				az: security.NewChain(signerAuthorizer{allow: c.allow, asked: &asked})}
			err := a.admit(context.Background(), c.who, c.sub, c.obj, c.old)
			got := ""
			if err != nil {
				e, ok := err.(*apierr.Error)
				if !ok || e.Status.Code != 403 || e.Status.Reason != apierr.ReasonForbidden {
					t.Fatalf("error %v, want a Forbidden", err)
				}
				got = e.Status.Message
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
			var names []string
			for _, q := range asked {
				if q.Verb == "" || q.APIGroup != g || q.APIVersion != "*" || q.Resource != "signers" || q.Namespace != "" || !q.ResourceRequest || q.User.Name != c.who.Name {
					t.Errorf("asked %+v", q)
				}
				names = append(names, q.Name)
			}
			if !slices.Equal(names, c.asked) {
				t.Errorf("asked about %q, want %q", names, c.asked)
			}
		})
	}
}

// csrWithOrganizations returns a base64 PEM certificate request whose
// subject names the organizations.
func csrWithOrganizations(t *testing.T, orgs ...string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "u", Organization: orgs}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

func TestCSRSubjectRestriction(t *testing.T) {
	g := brand.Group("certificates")
	client := brand.Label("kube-apiserver-client")
	masters := csrWithOrganizations(t, "team", security.SystemPrivilegedGroup)
	others := csrWithOrganizations(t, "team", "system:nodes")
	refused := fmt.Sprintf(`certificatesigningrequests.%s "c3" is forbidden: use of %s signer with system:masters group is not allowed`, g, client)
	for _, c := range []struct {
		name, signer, request string
		who                   registry.Requester
		want                  string
	}{
		{"masters for the client signer", client, masters, registry.Requester{Name: "alice"}, refused},
		{"whoever asks", client, masters, registry.Requester{Name: "admin", Groups: []string{security.SystemPrivilegedGroup}}, refused},
		{"other groups", client, others, registry.Requester{Name: "alice"}, ""},
		{"another signer", brand.Label("kube-apiserver-client-kubelet"), masters, registry.Requester{Name: "alice"}, ""},
		{"unparsable", client, base64.StdEncoding.EncodeToString([]byte("hi")), registry.Requester{Name: "alice"},
			fmt.Sprintf(`certificatesigningrequests.%s "c3" is forbidden: failed to parse CSR: PEM block type must be CERTIFICATE REQUEST`, g)},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := csrAdmission{group: g, resource: "certificatesigningrequests", clientSigner: client}
			obj := registry.Object{"metadata": map[string]any{"name": "c3"},
				"spec": map[string]any{"signerName": c.signer, "request": c.request}}
			got := ""
			if err := a.admit(context.Background(), c.who, "", obj, nil); err != nil {
				e, ok := err.(*apierr.Error)
				if !ok || e.Status.Code != 403 || e.Status.Reason != apierr.ReasonForbidden {
					t.Fatalf("error %v, want a Forbidden", err)
				}
				got = e.Status.Message
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
			// Updates are not checked.
			if err := a.admit(context.Background(), c.who, "", obj, obj); err != nil {
				t.Errorf("update: %v", err)
			}
		})
	}
}
