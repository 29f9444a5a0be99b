package encrypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"

	"golang.org/x/crypto/nacl/secretbox"

	"platd/config"
)

// Errors of reading a stored value, with upstream's texts: an operator who
// searches for them finds upstream's advice, which applies.
var (
	// ErrNoMatch: no provider of the resource recognizes the value's prefix
	// (the key that wrote it is gone from the configuration).
	ErrNoMatch = errors.New("no matching prefix found")
	// ErrEncryptedData: a resource the configuration does not cover (or
	// whose only reader is identity) holds an encrypted value.
	ErrEncryptedData = errors.New("identity transformer tried to read encrypted data")
	errShort         = errors.New("the stored data was shorter than the required size")
	errBlockSize     = errors.New("the stored data is not a multiple of the block size")
	errPadding       = errors.New("invalid padding on input")
	errSecretbox     = errors.New("attempted to decode an invalid secretbox")
)

const (
	gcmNonceSize       = 12
	secretboxNonceSize = 24
	secretboxKeySize   = 32
)

// sealer encrypts and decrypts the part of a value after its prefix. ad is
// the authenticated data (the storage key), used by the AEAD providers.
type sealer interface {
	seal(dst, plain, ad []byte) ([]byte, error)
	open(sealed, ad []byte) ([]byte, error)
}

// keyed is one key of one provider: its full prefix
// ("k8s:enc:aesgcm:v1:key1:") and cipher. The identity provider is a keyed
// with no prefix and no cipher.
type keyed struct {
	provider string // config.Provider* type
	prefix   []byte
	label    string // the provider's prefix without the key, for Observer
	s        sealer
}

// keysOf builds the keys of one provider; brandPrefix is
// Brand.StorageValuePrefix.
func keysOf(p config.Provider, brandPrefix string) ([]keyed, error) {
	if p.Type == config.ProviderIdentity {
		return []keyed{{provider: p.Type}}, nil
	}
	out := make([]keyed, 0, len(p.Keys))
	for _, k := range p.Keys {
		var (
			s   sealer
			err error
		)
		switch p.Type {
		case config.ProviderAESGCM:
			s, err = newGCM(k.Secret)
		case config.ProviderAESCBC:
			s, err = newCBC(k.Secret)
		case config.ProviderSecretbox:
			s, err = newSecretbox(k.Secret)
		default:
			return nil, fmt.Errorf("provider %q is not supported", p.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("%s key %q: %w", p.Type, k.Name, err)
		}
		label := brandPrefix + p.Type + ":v1:"
		out = append(out, keyed{provider: p.Type, prefix: []byte(label + k.Name + ":"), label: label, s: s})
	}
	return out, nil
}

// gcmSealer is AES-GCM with a random 96-bit nonce before the ciphertext,
// the storage key as authenticated data.
type gcmSealer struct{ aead cipher.AEAD }

func newGCM(key []byte) (sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return gcmSealer{aead}, nil
}

func (g gcmSealer) seal(dst, plain, ad []byte) ([]byte, error) {
	n := len(dst)
	dst = append(dst, make([]byte, gcmNonceSize)...)
	nonce := dst[n:]
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("unable to read sufficient random bytes: %w", err)
	}
	return g.aead.Seal(dst, nonce, plain, ad), nil
}

func (g gcmSealer) open(sealed, ad []byte) ([]byte, error) {
	if len(sealed) < gcmNonceSize {
		return nil, errShort
	}
	return g.aead.Open(nil, sealed[:gcmNonceSize], sealed[gcmNonceSize:], ad)
}

// cbcSealer is AES-CBC with a random IV before the ciphertext and PKCS#7
// padding; it authenticates nothing (upstream discourages it for that).
type cbcSealer struct{ block cipher.Block }

func newCBC(key []byte) (sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cbcSealer{block}, nil
}

func (c cbcSealer) seal(dst, plain, _ []byte) ([]byte, error) {
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	n := len(dst)
	dst = append(dst, make([]byte, aes.BlockSize+len(plain)+pad)...)
	iv, body := dst[n:n+aes.BlockSize], dst[n+aes.BlockSize:]
	if _, err := rand.Read(iv); err != nil {
		return nil, fmt.Errorf("unable to read sufficient random bytes: %w", err)
	}
	copy(body, plain)
	for i := len(plain); i < len(body); i++ {
		body[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(c.block, iv).CryptBlocks(body, body)
	return dst, nil
}

func (c cbcSealer) open(sealed, _ []byte) ([]byte, error) {
	if len(sealed) < aes.BlockSize {
		return nil, errShort
	}
	iv, body := sealed[:aes.BlockSize], sealed[aes.BlockSize:]
	if len(body)%aes.BlockSize != 0 {
		return nil, errBlockSize
	}
	out := make([]byte, len(body))
	cipher.NewCBCDecrypter(c.block, iv).CryptBlocks(out, body)
	if len(out) == 0 {
		return nil, errPadding
	}
	pad := int(out[len(out)-1])
	if pad == 0 || pad > len(out) || pad > aes.BlockSize {
		return nil, errPadding
	}
	if !bytes.Equal(out[len(out)-pad:], bytes.Repeat(out[len(out)-1:], pad)) {
		return nil, errPadding
	}
	return out[:len(out)-pad], nil
}

// secretboxSealer is NaCl secretbox (XSalsa20-Poly1305) with a random
// 192-bit nonce before the box.
type secretboxSealer struct{ key [secretboxKeySize]byte }

func newSecretbox(key []byte) (sealer, error) {
	if len(key) != secretboxKeySize {
		return nil, fmt.Errorf("secretbox key of %d bytes, want %d", len(key), secretboxKeySize)
	}
	var s secretboxSealer
	copy(s.key[:], key)
	return &s, nil
}

func (s *secretboxSealer) seal(dst, plain, _ []byte) ([]byte, error) {
	var nonce [secretboxNonceSize]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("unable to read sufficient random bytes: %w", err)
	}
	dst = append(dst, nonce[:]...)
	return secretbox.Seal(dst, plain, &nonce, &s.key), nil
}

func (s *secretboxSealer) open(sealed, _ []byte) ([]byte, error) {
	if len(sealed) < secretboxNonceSize {
		return nil, errShort
	}
	var nonce [secretboxNonceSize]byte
	copy(nonce[:], sealed)
	out, ok := secretbox.Open(nil, sealed[secretboxNonceSize:], &nonce, &s.key)
	if !ok {
		return nil, errSecretbox
	}
	return out, nil
}
