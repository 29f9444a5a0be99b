package server

import (
	"context"
	"encoding/base64"

	"platd/config"
	"platd/security"
	"platd/server/apierr"
	"platd/server/controllers"
	"platd/server/registry"
)

// bootstrapTokenAuthenticators returns the bootstrap token authenticator
// when --enable-bootstrap-token-auth is on and secrets are served.
func (s *Server) bootstrapTokenAuthenticators() []security.TokenAuthenticator {
	d := s.reg.Lookup("", "v1", "secrets")
	if !s.opts.EnableBootstrapTokenAuth || d == nil {
		return nil
	}
	src := bootstrapSecrets{s: s, d: d}
	return []security.TokenAuthenticator{security.NewBootstrapTokenAuthenticator(src, s.opts.Brand.BootstrapTokenType(), nil, s.log)}
}

// bootstrapSecrets reads token secrets from the store's memory.
type bootstrapSecrets struct {
	s *Server
	d *registry.Descriptor
}

func (b bootstrapSecrets) BootstrapTokenSecret(_ context.Context, name string) (*security.BootstrapTokenSecret, error) {
	obj, err := b.s.rest.Get(b.d, b.s.opts.Brand.SystemNamespace, name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := &security.BootstrapTokenSecret{}
	out.Type, _ = obj["type"].(string)
	if meta, _ := obj["metadata"].(map[string]any); meta != nil {
		ts, _ := meta["deletionTimestamp"].(string)
		out.Deleting = ts != ""
	}
	if data, ok := obj["data"].(map[string]any); ok {
		out.Data = make(map[string][]byte, len(data))
		for k, v := range data {
			str, _ := v.(string)
			if out.Data[k], err = base64.StdEncoding.DecodeString(str); err != nil {
				// Stored data is always valid base64; a value that is not
				// can match nothing.
				out.Data[k] = nil
			}
		}
	}
	return out, nil
}

// writeClusterInfo creates the public cluster-info ConfigMap with a
// kubeconfig naming this server and its CA, as upstream's cluster
// bootstrap does; an existing one is left as it is.
func (s *Server) writeClusterInfo(ctx context.Context) {
	d := s.reg.Lookup("", "v1", "configmaps")
	if d == nil {
		return
	}
	kc, err := security.MarshalClusterInfo(s.url, s.rootCA)
	if err == nil {
		err = s.rest.CreateOnly(ctx, d, registry.Object{
			"metadata": map[string]any{"name": security.ClusterInfoName, "namespace": s.opts.Brand.PublicNamespace},
			"data":     map[string]any{security.ClusterInfoKubeconfigKey: string(kc)},
		})
	}
	if err != nil && apierr.ReasonOf(err) != apierr.ReasonAlreadyExists {
		s.log.Error("writing cluster-info", "err", err)
	}
}

// bootstrapControllers returns the bootstrap signer and token cleaner
// that --controllers leaves on.
func (s *Server) bootstrapControllers() []func(context.Context) {
	b, on := s.opts.Brand, s.opts.ControllerEnabled
	secrets, cms := s.reg.Lookup("", "v1", "secrets"), s.reg.Lookup("", "v1", "configmaps")
	if secrets == nil {
		return nil
	}
	tokens := controllers.BootstrapTokens{Source: s.store, Objects: s.rest, Secrets: secrets,
		SystemNamespace: b.SystemNamespace, TokenType: b.BootstrapTokenType(), Log: s.log}
	var runs []func(context.Context)
	if cms != nil && on(config.ControllerBootstrapSigner) {
		runs = append(runs, (&controllers.BootstrapSigner{BootstrapTokens: tokens, ConfigMaps: cms, PublicNamespace: b.PublicNamespace}).Run)
	}
	if on(config.ControllerTokenCleaner) {
		runs = append(runs, (&controllers.TokenCleaner{BootstrapTokens: tokens}).Run)
	}
	return runs
}
