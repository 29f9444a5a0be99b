package security

import (
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"

	jose "github.com/go-jose/go-jose/v4"
)

// Paths of the service-account issuer discovery documents.
const (
	OpenIDConfigurationPath = "/.well-known/openid-configuration"
	JWKSPath                = "/openid/v1/jwks"
	// JWKSMediaType is the Content-Type of the key set.
	JWKSMediaType = "application/jwk-set+json"
)

// ErrIssuerNotDiscoverable is returned when the signing issuer is not an
// https URL without query or fragment: relying parties could not fetch
// the documents, so they are not served.
var ErrIssuerNotDiscoverable = errors.New("service account issuer discovery is disabled: the issuer must be an https URL without query or fragment")

// IssuerDiscovery returns the OpenID configuration and the JSON web key
// set of the service-account issuer. jwksURI "" means
// https://<externalHost>/openid/v1/jwks.
func IssuerDiscovery(issuer, jwksURI, externalHost string, keys []crypto.PublicKey) (config, jwks []byte, err error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Scheme != "https" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return nil, nil, fmt.Errorf("%w: %q", ErrIssuerNotDiscoverable, issuer)
	}
	if jwksURI == "" {
		jwksURI = (&url.URL{Scheme: "https", Host: externalHost, Path: JWKSPath}).String()
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	var algs []string
	seen := map[string]bool{}
	for _, k := range keys {
		alg, err := keyAlgorithm(k)
		if err != nil {
			return nil, nil, err
		}
		kid, err := KeyID(k)
		if err != nil {
			return nil, nil, err
		}
		if seen[kid] {
			continue
		}
		seen[kid] = true
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: string(alg), Use: "sig"})
		if !slices.Contains(algs, string(alg)) {
			algs = append(algs, string(alg))
		}
	}
	slices.Sort(algs)
	if algs == nil {
		algs = []string{}
	}
	config, err = json.Marshal(struct {
		Issuer        string   `json:"issuer"`
		JWKSURI       string   `json:"jwks_uri"`
		ResponseTypes []string `json:"response_types_supported"`
		SubjectTypes  []string `json:"subject_types_supported"`
		SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
	}{issuer, jwksURI, []string{"id_token"}, []string{"public"}, algs})
	if err != nil {
		return nil, nil, err
	}
	jwks, err = json.Marshal(set)
	return config, jwks, err
}
