package security

import (
	"fmt"

	jose "github.com/go-jose/go-jose/v4"
	"sigs.k8s.io/yaml"
)

// Names of the public cluster-info ConfigMap and its keys. They are the
// same in every brand; the ConfigMap lives in the brand's public namespace.
const (
	ClusterInfoName = "cluster-info"
	// ClusterInfoKubeconfigKey holds a kubeconfig naming the server and
	// the CA that verifies it.
	ClusterInfoKubeconfigKey = "kubeconfig"
	// ClusterInfoJWSPrefix and a token id name the key holding the
	// kubeconfig's detached signature by that token.
	ClusterInfoJWSPrefix = "jws-kubeconfig-"
)

// MarshalClusterInfo returns the kubeconfig published in cluster-info:
// one unnamed cluster with the server URL and the CA bundle (PEM), no
// users and no contexts, as joining clients expect it.
func MarshalClusterInfo(server string, caPEM []byte) ([]byte, error) {
	var c kcCluster
	c.Cluster.Server = server
	c.Cluster.CAData = caPEM
	f := struct {
		APIVersion     string      `json:"apiVersion"`
		Kind           string      `json:"kind"`
		Clusters       []kcCluster `json:"clusters"`
		Contexts       []kcContext `json:"contexts"`
		CurrentContext string      `json:"current-context"`
		Preferences    struct{}    `json:"preferences"`
		Users          []kcUser    `json:"users"`
	}{APIVersion: "v1", Kind: "Config", Clusters: []kcCluster{c}}
	b, err := yaml.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encoding cluster-info kubeconfig: %w", err)
	}
	return b, nil
}

// SignDetachedJWS signs content with a bootstrap token (id and secret):
// HS256 keyed with the secret, the id as "kid", in the compact form with
// the payload left out (RFC 7515 appendix F). Clients holding the token
// recompute it to trust content.
func SignDetachedJWS(content []byte, id, secret string) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: hmacKey(secret)},
		(&jose.SignerOptions{}).WithHeader("kid", id))
	if err != nil {
		return "", fmt.Errorf("preparing the signature of token %s: %w", id, err)
	}
	jws, err := signer.Sign(content)
	if err != nil {
		return "", fmt.Errorf("signing with token %s: %w", id, err)
	}
	return jws.DetachedCompactSerialize()
}

// VerifyDetachedJWS checks a detached signature of content made by the
// token id.secret, as a joining client does.
func VerifyDetachedJWS(sig string, content []byte, id, secret string) error {
	jws, err := jose.ParseDetached(sig, content, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		return fmt.Errorf("parsing the signature: %w", err)
	}
	if len(jws.Signatures) != 1 || jws.Signatures[0].Header.KeyID != id {
		return fmt.Errorf("the signature is not by token %s", id)
	}
	if err := jws.DetachedVerify(content, hmacKey(secret)); err != nil {
		return fmt.Errorf("verifying the signature: %w", err)
	}
	return nil
}

// hmacKey is the token secret zero-padded to 32 bytes: the JOSE library
// refuses HS256 keys shorter than the hash, and HMAC pads short keys with
// zeros anyway, so the signature is that of the bare secret.
func hmacKey(secret string) []byte {
	key := make([]byte, max(len(secret), 32))
	copy(key, secret)
	return key
}
