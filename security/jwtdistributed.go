package security

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Keys of OpenID Connect distributed claims (Core 1.0 §5.6.2).
const (
	claimNamesKey   = "_claim_names"
	claimSourcesKey = "_claim_sources"
)

// claimSource is one entry of _claim_sources.
type claimSource struct {
	URL         string `json:"endpoint"`
	AccessToken string `json:"access_token"`
	JWT         string `json:"JWT"`
}

// expandGroups resolves the groups claim when the token names it as
// distributed: the endpoint returns a JWT of the same issuer, verified as
// the token was, whose groups claim is copied in. Only the groups claim is
// ever resolved, as upstream.
func (a *JWTAuthenticator) expandGroups(ctx context.Context, claims map[string]json.RawMessage) error {
	claim := a.cfg.ClaimMappings.Groups.Claim
	if claim == "" {
		return nil
	}
	if _, ok := claims[claim]; ok {
		return nil
	}
	rawNames, ok := claims[claimNamesKey]
	if !ok {
		return nil
	}
	names := map[string]string{}
	if err := json.Unmarshal(rawNames, &names); err != nil {
		return fmt.Errorf("oidc: error parsing distributed claim names: %w", err)
	}
	rawSources, ok := claims[claimSourcesKey]
	if !ok {
		return errors.New("oidc: no claim sources")
	}
	var sources map[string]claimSource
	if err := json.Unmarshal(rawSources, &sources); err != nil {
		return fmt.Errorf("oidc: could not parse claim sources: %w", err)
	}
	src, ok := names[claim]
	if !ok {
		return nil
	}
	ep, ok := sources[src]
	if !ok {
		return fmt.Errorf("id token _claim_names contained a source %s missing in _claims_sources", src)
	}
	if ep.URL == "" {
		// An aggregated claim (ep.JWT) is not resolved, as upstream.
		return nil
	}
	token, err := a.fetchClaimJWT(ctx, ep)
	if err != nil {
		return fmt.Errorf("while getting distributed claim %q: %w", claim, err)
	}
	iss, ok := untrustedIssuer(token)
	if !ok {
		return fmt.Errorf("getting untrusted issuer from endpoint %v failed for claim %q", ep.URL, claim)
	}
	// Upstream would discover any issuer the endpoint names; platd
	// trusts only the token's own issuer for its distributed claims.
	if iss != a.cfg.Issuer.URL {
		return fmt.Errorf("verifying untrusted issuer %v failed: only claims of issuer %q are resolved", iss, a.cfg.Issuer.URL)
	}
	dist, err := a.verify(ctx, token)
	if err != nil {
		return fmt.Errorf("verify distributed claim token: %w", err)
	}
	value, ok := dist[claim]
	if !ok {
		return fmt.Errorf("jwt returned by distributed claim endpoint %q did not contain claim: %v", ep.URL, claim)
	}
	claims[claim] = value
	return nil
}

func (a *JWTAuthenticator) fetchClaimJWT(ctx context.Context, ep claimSource) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ep.URL, nil)
	if err != nil {
		return "", fmt.Errorf("could not create request: %w", err)
	}
	if ep.AccessToken != "" {
		req.Header.Set("Authorization", "Bearer "+ep.AccessToken)
	}
	resp, err := a.provider.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("could not get claim from %s: %w", ep.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProviderResponse))
	if err != nil {
		return "", fmt.Errorf("could not decode distributed claim response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, body)
	}
	return string(body), nil
}
