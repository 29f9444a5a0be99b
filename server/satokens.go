package server

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"platd/bolt"
	"platd/config"
	"platd/security"
	"platd/server/controllers"
	"platd/server/registry"
	"platd/server/rest"
)

// saTokens is the server's service-account token machinery: the signer,
// the verification keys and the API audiences.
type saTokens struct {
	signer    *security.TokenSigner
	keys      []crypto.PublicKey
	audiences []string
	objects   *tokenObjects
}

// serviceAccountTokens loads or generates the signing key and builds the
// JWT authenticator. It needs the store and the registry.
func (s *Server) serviceAccountTokens() (*saTokens, security.TokenAuthenticator, error) {
	o := s.opts.ServiceAccounts
	signing := o.SigningKey
	keys := o.VerifyKeys
	if signing == nil {
		k, err := security.EnsureServiceAccountKey(filepath.Join(s.opts.CertDir, security.ServiceAccountKeyName))
		if err != nil {
			return nil, nil, err
		}
		signing = k
		keys = append([]crypto.PublicKey{k.Public()}, keys...)
	}
	signer, err := security.NewTokenSigner(s.opts.Brand, o.SignIssuer(), signing)
	if err != nil {
		return nil, nil, fmt.Errorf("service-account signing key: %w", err)
	}
	objs := newTokenObjects(s.store, s.reg, s.rest, s.opts.Brand, s.log)
	auth, err := security.NewServiceAccountAuthenticator(security.ServiceAccountTokenConfig{
		Brand: s.opts.Brand, Issuers: o.AllIssuers(), Keys: keys, APIAudiences: o.Audiences(),
		Lookup: !o.NoLookup, Objects: objs, Log: s.log,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("service-account verification keys: %w", err)
	}
	return &saTokens{signer: signer, keys: keys, audiences: o.Audiences(), objects: objs}, auth, nil
}

// issuerDiscoveryMaxAge is the Cache-Control max-age of the discovery
// documents: keys change only with a restart.
const issuerDiscoveryMaxAge = "public, max-age=3600"

// issuerDiscovery returns the handlers of the OpenID configuration and the
// key set, or nil when the issuer is not discoverable (logged).
func (s *Server) issuerDiscovery() (cfg, jwks http.Handler) {
	if s.sa == nil {
		return nil, nil
	}
	o := s.opts.ServiceAccounts
	host := net.JoinHostPort(s.opts.BindAddress, strconv.Itoa(s.ln.Addr().(*net.TCPAddr).Port))
	if a := s.apiServer(); a.Address.IsValid() {
		host = net.JoinHostPort(a.Address.String(), strconv.Itoa(a.Port))
	}
	cfgJSON, jwksJSON, err := security.IssuerDiscovery(o.SignIssuer(), o.JWKSURI, host, s.sa.keys)
	if err != nil {
		s.log.Warn("service account issuer discovery not served", "err", err)
		return nil, nil
	}
	serve := func(body []byte, mediaType string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", mediaType)
			w.Header().Set("Cache-Control", issuerDiscoveryMaxAge)
			w.WriteHeader(http.StatusOK)
			if r.Method != http.MethodHead {
				_, _ = w.Write(body)
			}
		})
	}
	return serve(cfgJSON, "application/json"), serve(jwksJSON, security.JWKSMediaType)
}

// tokenObjects answers token validation from the store's memory. Decoded
// objects are kept per key with the revision they were read at, so a
// request pays a map lookup unless the object changed.
type tokenObjects struct {
	store bolt.Store
	descs [4]*registry.Descriptor
	names [4]string
	rest  *rest.Handler
	log   *slog.Logger
	// lastUsed is the label a legacy token's use is stamped in; manager
	// the field manager of that write.
	lastUsed, manager string

	mu      sync.Mutex
	decoded map[string]decodedObject
	// stamping holds the secrets whose last-used label is being written.
	stamping map[string]bool
}

type decodedObject struct {
	rev int64
	obj *security.TokenObject
}

// tokenObjectsCacheSize bounds the decoded objects kept; past it the cache
// starts over (each entry is re-decoded on its next use).
const tokenObjectsCacheSize = 16384

func newTokenObjects(store bolt.Store, reg *registry.Registry, h *rest.Handler, b config.Brand, log *slog.Logger) *tokenObjects {
	t := &tokenObjects{store: store, rest: h, log: log, decoded: map[string]decodedObject{}, stamping: map[string]bool{},
		lastUsed: b.Label("legacy-token-last-used"), manager: b.FieldManager,
		names: [4]string{"serviceaccount", "secret", "pod", "node"}}
	for i, r := range []string{"serviceaccounts", "secrets", "pods", "nodes"} {
		t.descs[i] = reg.Lookup("", "v1", r)
	}
	return t
}

// storedTokenObject is the part of a stored object token validation reads.
type storedTokenObject struct {
	Metadata struct {
		UID               string            `json:"uid"`
		DeletionTimestamp *time.Time        `json:"deletionTimestamp"`
		Labels            map[string]string `json:"labels"`
	} `json:"metadata"`
	Data struct {
		Token []byte `json:"token"`
	} `json:"data"`
	Secrets []struct {
		Name string `json:"name"`
	} `json:"secrets"`
	Spec struct {
		ServiceAccountName string `json:"serviceAccountName"`
		NodeName           string `json:"nodeName"`
	} `json:"spec"`
}

func (t *tokenObjects) TokenObject(kind security.TokenObjectKind, ns, name string) (*security.TokenObject, error) {
	d := t.descs[kind]
	if d == nil {
		return nil, t.notFound(kind, name)
	}
	key := d.Key(ns, name)
	kv, err := t.store.Get(key)
	if err != nil {
		return nil, t.notFound(kind, name)
	}
	t.mu.Lock()
	c, ok := t.decoded[key]
	t.mu.Unlock()
	if ok && c.rev == kv.ModRevision {
		return c.obj, nil
	}
	var st storedTokenObject
	if err := json.Unmarshal(kv.Value, &st); err != nil {
		return nil, fmt.Errorf("decoding %s %s/%s: %w", t.names[kind], ns, name, err)
	}
	obj := &security.TokenObject{UID: st.Metadata.UID, Labels: st.Metadata.Labels, Token: st.Data.Token,
		ServiceAccountName: st.Spec.ServiceAccountName, NodeName: st.Spec.NodeName}
	if st.Metadata.DeletionTimestamp != nil {
		obj.Deleted = *st.Metadata.DeletionTimestamp
	}
	for _, s := range st.Secrets {
		obj.SecretNames = append(obj.SecretNames, s.Name)
	}
	t.mu.Lock()
	if len(t.decoded) >= tokenObjectsCacheSize {
		clear(t.decoded)
	}
	t.decoded[key] = decodedObject{rev: kv.ModRevision, obj: obj}
	t.mu.Unlock()
	return obj, nil
}

// notFound is the lister's NotFound text upstream's validation returns.
func (t *tokenObjects) notFound(kind security.TokenObjectKind, name string) error {
	return fmt.Errorf("%s %q not found", t.names[kind], name)
}

// legacyStampTimeout bounds the label write of a legacy token's use.
const legacyStampTimeout = 10 * time.Second

func (t *tokenObjects) LegacyTokenUsed(ns, name, date string) {
	d := t.descs[security.TokenSecret]
	key := ns + "/" + name
	t.mu.Lock()
	if d == nil || t.stamping[key] {
		t.mu.Unlock()
		return
	}
	t.stamping[key] = true
	t.mu.Unlock()
	go func() {
		defer func() {
			t.mu.Lock()
			delete(t.stamping, key)
			t.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(rest.WithManager(context.Background(), t.manager), legacyStampTimeout)
		defer cancel()
		label := t.lastUsed
		_, err := t.rest.Update(ctx, d, ns, name, "", func(old registry.Object) registry.Object {
			meta, _ := old["metadata"].(map[string]any)
			labels, _ := meta["labels"].(map[string]any)
			if labels == nil {
				labels = map[string]any{}
				meta["labels"] = labels
			}
			if labels[label] == date {
				return nil
			}
			labels[label] = date
			return old
		})
		if err != nil {
			t.log.Debug("recording a legacy token's use", "secret", key, "err", err)
		}
	}()
}

// legacyTokens is the controller that fills legacy token secrets; nil
// when secrets or service accounts are not served.
func (s *Server) legacyTokens() *controllers.ServiceAccountTokens {
	sa, secrets := s.reg.Lookup("", "v1", "serviceaccounts"), s.reg.Lookup("", "v1", "secrets")
	if sa == nil || secrets == nil {
		return nil
	}
	b := s.opts.Brand
	return &controllers.ServiceAccountTokens{Source: s.store, Objects: s.rest, ServiceAccounts: sa, Secrets: secrets,
		Type: b.Label("service-account-token"), NameAnnotation: b.Label("service-account.name"), UIDAnnotation: b.Label("service-account.uid"),
		CA: s.rootCA, Log: s.log,
		Sign: func(ns, saName, saUID, secretName string) (string, error) {
			return s.sa.signer.SignLegacy(security.LegacyToken{Namespace: ns, ServiceAccountName: saName, ServiceAccountUID: saUID, SecretName: secretName})
		},
	}
}

// legacyTokenTracking keeps the ConfigMap that dates the tracking of
// legacy service-account tokens' use, from every server as upstream's
// API servers keep it; false when ConfigMaps are not served.
func (s *Server) legacyTokenTracking() bool {
	cm := s.reg.Lookup("", "v1", "configmaps")
	if cm == nil {
		return false
	}
	b := s.opts.Brand
	t := &controllers.LegacyTokenTracking{Source: s.store, Objects: s.rest, ConfigMaps: cm,
		Namespace: b.SystemNamespace, Name: b.LegacyTokenTrackingConfigMap, After: s.startDone, Log: s.log}
	s.background.run(t.Run)
	return true
}
