package builtin

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"platd/server/registry"
)

// testCSR returns a PEM certificate request and a PEM certificate, both
// base64 encoded as the API carries them.
func testCSR(t *testing.T) (req, cert string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "u"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "u"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(typ string, der []byte) string {
		return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
	}
	return enc("CERTIFICATE REQUEST", der), enc("CERTIFICATE", certDER)
}

// subUpdate runs a write through a subresource as the REST layer does:
// defaults on the written object, its Copy (status by default) into the
// stored object, the type's update hook and the subresource's rules.
func subUpdate(d *registry.Descriptor, obj, old registry.Object, sub string) (registry.Object, []string) {
	obj, old = copyObj(obj), copyObj(old)
	if d.Strategy.Default != nil {
		d.Strategy.Default(obj)
	}
	next := copyObj(old)
	if cp := d.Subresource(sub).Copy; cp != nil {
		cp(next, obj)
	} else {
		next["status"] = obj["status"]
	}
	d.Strategy.PrepareForUpdate(next, old, sub)
	return next, errStrings(d.Subresource(sub).Validate(next, old))
}

func TestCertificateSigningRequest(t *testing.T) {
	t.Parallel()
	d := typeDescriptor(t, "CertificateSigningRequest")
	req, cert := testCSR(t)
	csr := func(spec map[string]any) registry.Object {
		s := map[string]any{"request": req, "signerName": "example.com/signer", "usages": []any{"client auth"}}
		for k, v := range spec {
			s[k] = v
		}
		return registry.Object{"metadata": map[string]any{"name": "c"}, "spec": s}
	}
	badPEM := base64.StdEncoding.EncodeToString([]byte("hi"))
	legacy := brand.Label("legacy-unknown")
	tests := []struct {
		name string
		obj  registry.Object
		want []string
	}{
		{"valid", csr(map[string]any{"expirationSeconds": int64(600)}), nil},
		{"not pem", csr(map[string]any{"request": badPEM}), []string{
			"spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST",
		}},
		{"usages", csr(map[string]any{"usages": []any{"client auth", "flying", "client auth"}}), []string{
			`spec.usages[1]: Unsupported value: "flying": supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"`,
			`spec.usages[2]: Duplicate value: "client auth"`,
		}},
		{"no usages, signer, short life", csr(map[string]any{"usages": nil, "signerName": "", "expirationSeconds": int64(599)}), []string{
			"spec.usages: Required value",
			"spec.signerName: Required value",
			"spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)",
		}},
		{"legacy signer", csr(map[string]any{"signerName": legacy}), []string{
			`spec.signerName: Invalid value: "` + legacy + `": the legacy signerName is not allowed via this API version`,
		}},
		{"signer without path", csr(map[string]any{"signerName": "example.com"}), []string{
			`spec.signerName: Invalid value: "example.com": must be a fully qualified domain and path of the form 'example.com/signer-name'`,
		}},
		{"signer labels", csr(map[string]any{"signerName": "Example/a_b"}), []string{
			`spec.signerName: Invalid value: "Example": validating label "Example": ` + labelMsg,
			`spec.signerName: Invalid value: "Example": should be a domain with at least two segments separated by dots`,
			`spec.signerName: Invalid value: "a_b": validating label "a_b": ` + subdomainMsg,
		}},
		{"signer too long", csr(map[string]any{"signerName": "example.com/" + strings.Repeat("a.", 300) + "a"}), []string{
			`spec.signerName: Invalid value: "` + strings.Repeat("a.", 300) + `a": validating label "": ` + subdomainMsg,
			"spec.signerName: Too long: may not be more than 571 bytes",
		}[1:]},
	}
	for _, tt := range tests {
		_, errs := create(d, tt.obj)
		checkErrs(t, tt.name, errs, tt.want)
	}

	// A create starts without status; main updates keep spec and status.
	withStatus := csr(nil)
	withStatus["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Approved"}}, "certificate": cert}
	stored := mustCreate(t, d, withStatus)
	if s := mapAt(stored, "status"); len(s) != 0 {
		t.Errorf("status on create = %v", s)
	}
	changed := csr(map[string]any{"usages": []any{"server auth"}})
	changed["status"] = withStatus["status"]
	next, errs := update(d, changed, stored, "")
	checkErrs(t, "main update", errs, nil)
	if got := listOf(valueAt(next, "spec", "usages")); len(got) != 1 || got[0] != "client auth" || len(mapAt(next, "status")) != 0 {
		t.Errorf("main update wrote spec %v status %v", next["spec"], next["status"])
	}

	// Approval writes conditions only, with status True by default and
	// times filled in.
	approve := registry.Object{"status": map[string]any{"certificate": cert, "conditions": []any{
		map[string]any{"type": "Approved", "reason": "ByTest"}}}}
	approved, msgs := subUpdate(d, approve, stored, "approval")
	if len(msgs) > 0 {
		t.Fatalf("approve: %v", msgs)
	}
	cond := mapsOf(valueAt(approved, "status", "conditions"))[0]
	if cond["status"] != "True" || str(cond, "lastUpdateTime") == "" || str(cond, "lastTransitionTime") == "" || has(mapAt(approved, "status"), "certificate") {
		t.Errorf("approved status = %v", approved["status"])
	}
	both := registry.Object{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Approved"}, map[string]any{"type": "Denied", "status": "False"}, map[string]any{"type": "Approved"}}}}
	_, msgs = subUpdate(d, both, stored, "approval")
	wantBoth := []string{
		`status.conditions[1].status: Unsupported value: "False": supported values: "True"`,
		`status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive`,
		`status.conditions[2].type: Invalid value: "Approved": Approved and Denied conditions are mutually exclusive`,
		`status.conditions[2].type: Duplicate value: "Approved"`,
	}
	if strings.Join(msgs, "\n") != strings.Join(wantBoth, "\n") {
		t.Errorf("approved and denied:\n got  %q\n want %q", msgs, wantBoth)
	}
	_, msgs = subUpdate(d, registry.Object{"status": map[string]any{}}, approved, "approval")
	if want := `status.conditions: Forbidden: updates may not remove a condition of type "Approved"`; len(msgs) != 1 || msgs[0] != want {
		t.Errorf("removing approval: %q", msgs)
	}

	// Status writes the certificate and other conditions; approval
	// conditions are kept, and adding one is refused.
	issued, msgs := subUpdate(d, registry.Object{"spec": map[string]any{}, "status": map[string]any{"certificate": cert, "conditions": []any{
		map[string]any{"type": "Approved", "reason": "Changed"}, map[string]any{"type": "Issued", "status": "Unknown"}}}}, approved, "status")
	if len(msgs) > 0 {
		t.Fatalf("issue: %v", msgs)
	}
	conds := mapsOf(valueAt(issued, "status", "conditions"))
	if str(issued, "status", "certificate") != cert || conds[0]["reason"] != "ByTest" || conds[1]["status"] != "Unknown" || str(issued, "spec", "request") != req {
		t.Errorf("issued = %v", issued)
	}
	_, msgs = subUpdate(d, registry.Object{"status": map[string]any{"certificate": base64.StdEncoding.EncodeToString([]byte("x")),
		"conditions": []any{map[string]any{"type": "Approved"}, map[string]any{"type": "Denied"}}}}, approved, "status")
	wantStatus := []string{
		`status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive`,
		"status.certificate: Invalid value: \"<certificate data>\": must contain at least one CERTIFICATE PEM block",
		`status.conditions: Forbidden: updates may not add a condition of type "Denied"`,
	}
	if strings.Join(msgs, "\n") != strings.Join(wantStatus, "\n") {
		t.Errorf("bad status:\n got  %q\n want %q", msgs, wantStatus)
	}
	_, msgs = subUpdate(d, registry.Object{"status": map[string]any{"certificate": req, "conditions": issued["status"].(map[string]any)["conditions"]}}, issued, "status")
	if want := []string{
		`status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"`,
		`status.certificate: Forbidden: updates may not modify existing certificate content`,
	}; strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("replacing the certificate: %q", msgs)
	}
	_, msgs = subUpdate(d, registry.Object{"status": map[string]any{"certificate": cert, "conditions": approved["status"].(map[string]any)["conditions"]}}, approved, "approval")
	if len(msgs) != 0 {
		t.Errorf("approval writing the certificate: %q", msgs)
	}
}
