package encrypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"

	"platd/config"
)

var (
	k16 = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef"))
	k32 = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	o32 = base64.StdEncoding.EncodeToString([]byte("fedcba9876543210fedcba9876543210"))
)

func build(t testing.TB, brand string, body string, observe Observer) *Transformer {
	t.Helper()
	b := config.Brands[brand]
	in := "apiVersion: " + config.EncryptionConfigAPIVersions(b)[0] + "\nkind: EncryptionConfiguration\n" + body
	c, err := config.DecodeEncryptionConfig([]byte(in), b)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(c, b, observe)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func one(provider, key string) string {
	return "resources:\n- resources: [secrets, '*.apps']\n  providers:\n  - " + provider + ": {keys: [{name: key1, secret: " + key + "}]}\n"
}

func TestRoundTrip(t *testing.T) {
	plain := []byte(`{"kind":"Secret","data":{"password":"aHVudGVyMg=="}}`)
	for _, tc := range []struct{ provider, key, prefix string }{
		{"aesgcm", k16, "k8s:enc:aesgcm:v1:key1:"},
		{"aesgcm", k32, "k8s:enc:aesgcm:v1:key1:"},
		{"aescbc", k32, "k8s:enc:aescbc:v1:key1:"},
		{"secretbox", k32, "k8s:enc:secretbox:v1:key1:"},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			tr := build(t, "kubernetes", one(tc.provider, tc.key), nil)
			for _, key := range []string{"/secrets/ns/a", "/deployments.apps/ns/d"} {
				enc, err := tr.ToStorage(key, plain)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(enc, []byte(tc.prefix)) || bytes.Contains(enc, []byte("password")) {
					t.Fatalf("stored %q", enc)
				}
				again, _ := tr.ToStorage(key, plain)
				if bytes.Equal(enc, again) {
					t.Error("two encryptions are equal: the nonce is not random")
				}
				got, stale, err := tr.FromStorage(key, enc)
				if err != nil || stale || !bytes.Equal(got, plain) {
					t.Fatalf("read back %q %v", got, err)
				}
				// Damage after the prefix fails, never panics.
				bad := bytes.Clone(enc)
				bad[len(bad)-1] ^= 1
				if _, _, err := tr.FromStorage(key, bad); err == nil && tc.provider != "aescbc" {
					t.Error("a damaged value was read")
				}
				if _, _, err := tr.FromStorage(key, enc[:len(tc.prefix)+3]); err == nil {
					t.Error("a truncated value was read")
				}
			}
		})
	}
}

// TestUpstreamLayout decrypts a value laid out by hand as upstream's
// aesgcm writes it: prefix, 12-byte nonce, then the sealed data with the
// storage key as authenticated data.
func TestUpstreamLayout(t *testing.T) {
	key := []byte("0123456789abcdef")
	block, _ := aes.NewCipher(key)
	aead, _ := cipher.NewGCM(block)
	nonce := []byte("nonce-12byte")
	storageKey := "/secrets/default/s"
	stored := append([]byte("k8s:enc:aesgcm:v1:key1:"), nonce...)
	stored = aead.Seal(stored, nonce, []byte("hello"), []byte(storageKey))
	tr := build(t, "kubernetes", one("aesgcm", k16), nil)
	got, _, err := tr.FromStorage(storageKey, stored)
	if err != nil || string(got) != "hello" {
		t.Fatalf("got %q %v", got, err)
	}
	// The key is authenticated: the same bytes under another key fail.
	if _, _, err := tr.FromStorage("/secrets/default/other", stored); err == nil {
		t.Error("a value moved to another key was read")
	}
	// And aescbc: prefix, 16-byte IV, CBC of the PKCS#7-padded data.
	iv := []byte("0123456789abcdef")
	body := append([]byte("hello"), bytes.Repeat([]byte{11}, 11)...)
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(body, body)
	stored = append(append([]byte("k8s:enc:aescbc:v1:key1:"), iv...), body...)
	tr = build(t, "kubernetes", one("aescbc", k16), nil)
	if got, _, err := tr.FromStorage(storageKey, stored); err != nil || string(got) != "hello" {
		t.Fatalf("aescbc got %q %v", got, err)
	}
}

func TestRotationAndIdentity(t *testing.T) {
	plain := []byte(`{"v":1}`)
	key := "/secrets/ns/a"
	old := build(t, "plat", one("aesgcm", k32), nil)
	enc, err := old.ToStorage(key, plain)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(enc, []byte("plat:enc:aesgcm:v1:key1:")) {
		t.Fatalf("plat brand prefix: %q", enc)
	}
	// A new key first, the old one second: old values read, new ones
	// are written with the new key.
	rotated := build(t, "plat", "resources:\n- resources: [secrets]\n  providers:\n  - secretbox: {keys: [{name: key2, secret: "+o32+"}]}\n  - aesgcm: {keys: [{name: key1, secret: "+k32+"}]}\n", nil)
	if got, stale, err := rotated.FromStorage(key, enc); err != nil || !stale || !bytes.Equal(got, plain) {
		t.Fatalf("old value after rotation: %q %v", got, err)
	}
	enc2, _ := rotated.ToStorage(key, plain)
	if !bytes.HasPrefix(enc2, []byte("plat:enc:secretbox:v1:key2:")) {
		t.Fatalf("rotated write: %q", enc2)
	}
	// The old key dropped: its values are unreadable.
	if _, _, err := build(t, "plat", one("secretbox", o32), nil).FromStorage(key, enc); !errors.Is(err, ErrNoMatch) {
		t.Errorf("dropped key: %v", err)
	}
	// Identity first decrypts (stepping aside) and writes plain.
	ident := build(t, "plat", "resources:\n- resources: [secrets]\n  providers:\n  - identity: {}\n  - aesgcm: {keys: [{name: key1, secret: "+k32+"}]}\n", nil)
	if got, stale, err := ident.FromStorage(key, enc); err != nil || !stale || !bytes.Equal(got, plain) {
		t.Fatalf("identity first, encrypted value: %q %v", got, err)
	}
	if out, _ := ident.ToStorage(key, plain); !bytes.Equal(out, plain) {
		t.Errorf("identity wrote %q", out)
	}
	if got, stale, err := ident.FromStorage(key, plain); err != nil || stale || !bytes.Equal(got, plain) {
		t.Errorf("identity read %q %v", got, err)
	}
	// A plain value of an encrypted resource without identity: no match.
	if _, _, err := old.FromStorage(key, plain); !errors.Is(err, ErrNoMatch) || err.Error() != "no matching prefix found" {
		t.Errorf("plain value without identity: %v", err)
	}
	// Resources outside the file stay plain, and an encrypted value there
	// is refused.
	if out, _ := old.ToStorage("/configmaps/ns/c", plain); !bytes.Equal(out, plain) {
		t.Errorf("uncovered write %q", out)
	}
	if _, _, err := old.FromStorage("/configmaps/ns/c", enc); !errors.Is(err, ErrEncryptedData) {
		t.Errorf("encrypted value of an uncovered resource: %v", err)
	}
}

// A resource named in several lists reads with the providers of every
// one of them, in the file's order, and writes with the first list's
// first provider.
func TestResourceInSeveralLists(t *testing.T) {
	plain := []byte(`{"v":1}`)
	key := "/secrets/ns/a"
	second := build(t, "plat", one("secretbox", o32), nil)
	fromSecond, _ := second.ToStorage(key, plain)
	tr := build(t, "plat", "resources:\n- resources: [secrets]\n  providers:\n  - aesgcm: {keys: [{name: key1, secret: "+k32+"}]}\n"+
		"- resources: [configmaps, secrets]\n  providers:\n  - secretbox: {keys: [{name: key1, secret: "+o32+"}]}\n  - identity: {}\n", nil)
	for _, tc := range []struct {
		name   string
		stored []byte
		stale  bool
	}{
		{"first list's provider", nil, false},
		{"second list's provider", fromSecond, true},
		{"second list's identity", plain, true},
	} {
		stored := tc.stored
		if stored == nil {
			stored, _ = tr.ToStorage(key, plain)
			if !bytes.HasPrefix(stored, []byte("plat:enc:aesgcm:v1:key1:")) {
				t.Fatalf("written %q, want the first list's aesgcm", stored)
			}
		}
		got, stale, err := tr.FromStorage(key, stored)
		if err != nil || stale != tc.stale || !bytes.Equal(got, plain) {
			t.Errorf("%s: read %q stale %v err %v", tc.name, got, stale, err)
		}
	}
	// The resource named only in the second list keeps that list's.
	if out, _ := tr.ToStorage("/configmaps/ns/c", plain); !bytes.HasPrefix(out, []byte("plat:enc:secretbox:v1:key1:")) {
		t.Errorf("configmaps written %q", out)
	}
}

// Keys sharing a name across the lists of a resource share a prefix: a
// value the first cannot open is read with the next, as a key rotated
// into a new list under its old name needs.
func TestSharedPrefixTriesEveryKey(t *testing.T) {
	plain := []byte(`{"v":1}`)
	key := "/secrets/ns/a"
	old := build(t, "plat", one("aescbc", k32), nil)
	fromOld, _ := old.ToStorage(key, plain)
	tr := build(t, "plat", "resources:\n- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{name: key1, secret: "+o32+"}]}\n"+
		"- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{name: key1, secret: "+k32+"}]}\n", nil)
	got, stale, err := tr.FromStorage(key, fromOld)
	if err != nil || !stale || !bytes.Equal(got, plain) {
		t.Errorf("read %q stale %v err %v", got, stale, err)
	}
	// A value no key opens still fails.
	none := build(t, "plat", one("aescbc", o32), nil)
	if _, _, err := none.FromStorage(key, fromOld); err == nil {
		t.Error("a value no key opens was read")
	}
}

func TestSwapAndStaleStored(t *testing.T) {
	key := "/secrets/ns/a"
	tr := build(t, "plat", one("aesgcm", k32), nil)
	enc, _ := tr.ToStorage(key, []byte("v"))
	if tr.StaleStored(key, enc) || !tr.StaleStored(key, []byte("v")) {
		t.Error("before the swap: own value stale, or plain value not")
	}
	if tr.StaleStored("/pods/ns/p", []byte("v")) || !tr.StaleStored("/pods/ns/p", enc) {
		t.Error("uncovered resource: plain value stale, or encrypted value not")
	}
	b := config.Brands["plat"]
	next, err := config.DecodeEncryptionConfig([]byte("apiVersion: "+config.EncryptionConfigAPIVersions(b)[0]+"\nkind: EncryptionConfiguration\n"+
		"resources:\n- resources: [secrets]\n  providers:\n  - identity: {}\n  - aesgcm: {keys: [{name: key1, secret: "+k32+"}]}\n"), b)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Swap(next); err != nil {
		t.Fatal(err)
	}
	if !tr.StaleStored(key, enc) || tr.StaleStored(key, []byte("v")) {
		t.Error("after the swap to identity first: encrypted value not stale, or plain value stale")
	}
	if out, _ := tr.ToStorage(key, []byte("v")); string(out) != "v" {
		t.Errorf("after the swap, written %q", out)
	}
	if got, stale, err := tr.FromStorage(key, enc); err != nil || !stale || string(got) != "v" {
		t.Errorf("old value after the swap: %q %v %v", got, stale, err)
	}
}

func TestObserver(t *testing.T) {
	var (
		mu  sync.Mutex
		got []string
	)
	tr := build(t, "kubernetes", one("aesgcm", k16), func(op, resource, prefix string, err error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, op+" "+resource+" "+prefix+" "+map[bool]string{true: "ok", false: "fail"}[err == nil])
	})
	enc, _ := tr.ToStorage("/secrets/n/a", []byte("x"))
	_, _, _ = tr.FromStorage("/secrets/n/a", enc)
	_, _, _ = tr.FromStorage("/secrets/n/b", enc)
	_, _ = tr.ToStorage("/pods/n/p", []byte("x"))
	want := "to_storage secrets k8s:enc:aesgcm:v1: ok|from_storage secrets k8s:enc:aesgcm:v1: ok|from_storage secrets k8s:enc:aesgcm:v1: fail|to_storage pods  ok"
	if s := strings.Join(got, "|"); s != want {
		t.Errorf("observed\n%s\nwant\n%s", s, want)
	}
}

func FuzzFromStorage(f *testing.F) {
	tr := build(f, "kubernetes", "resources:\n- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{name: c, secret: "+k16+"}]}\n  - secretbox: {keys: [{name: s, secret: "+k32+"}]}\n  - aesgcm: {keys: [{name: g, secret: "+k16+"}]}\n", nil)
	for _, p := range []string{"k8s:enc:aescbc:v1:c:", "k8s:enc:secretbox:v1:s:", "k8s:enc:aesgcm:v1:g:"} {
		f.Add([]byte(p + "0123456789abcdef0123456789abcdef"))
	}
	f.Fuzz(func(t *testing.T, stored []byte) {
		out, _, err := tr.FromStorage("/secrets/n/a", stored)
		if err == nil && bytes.HasPrefix(stored, []byte("k8s:enc:aesgcm")) {
			t.Fatalf("forged aesgcm value read as %q", out)
		}
	})
}

// BenchmarkTransform measures one encryption and one decryption of a 1 KB
// value per provider: the cost a write (twice: value and previous state)
// and a start (once per value) pay.
func BenchmarkTransform(b *testing.B) {
	value := bytes.Repeat([]byte(`{"data":{"password":"aHVudGVyMg=="}}`), 30)[:1024]
	for _, p := range []struct{ name, body string }{
		{"identity", "resources:\n- resources: [secrets]\n  providers: [{identity: {}}]\n"},
		{"aesgcm", one("aesgcm", k32)},
		{"aescbc", one("aescbc", k32)},
		{"secretbox", one("secretbox", k32)},
	} {
		tr := build(b, "kubernetes", p.body, nil)
		enc, _ := tr.ToStorage("/secrets/ns/a", value)
		b.Run(p.name+"/to", func(b *testing.B) {
			b.SetBytes(int64(len(value)))
			for range b.N {
				if _, err := tr.ToStorage("/secrets/ns/a", value); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(p.name+"/from", func(b *testing.B) {
			b.SetBytes(int64(len(value)))
			for range b.N {
				if _, _, err := tr.FromStorage("/secrets/ns/a", enc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
