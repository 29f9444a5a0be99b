package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// ErrKubeconfig is wrapped by every error LoadKubeconfigClient returns.
var ErrKubeconfig = errors.New("invalid kubeconfig")

// KubeconfigClient is what a client needs from a kubeconfig file: where to
// connect and how to trust and authenticate to it. Paths in the file are
// resolved and read at load time, so the value holds contents, not names.
type KubeconfigClient struct {
	// Server is the cluster's server URL, used as given.
	Server string
	// CAPEM verifies the server; empty means the system roots.
	CAPEM []byte
	// TLSServerName overrides the name the server certificate is checked
	// against.
	TLSServerName string
	// InsecureSkipTLSVerify turns server verification off.
	InsecureSkipTLSVerify bool
	// ClientCertPEM and ClientKeyPEM are the client certificate pair, both
	// or neither.
	ClientCertPEM, ClientKeyPEM []byte
	// Token is a bearer token presented to the server.
	Token string
}

// kubeconfigFile is the subset of the kubeconfig format a client reads.
// Unknown keys (preferences, extensions, exec plugins' peers) are ignored.
type kubeconfigFile struct {
	Clusters []struct {
		Name    string `json:"name"`
		Cluster struct {
			Server                string `json:"server"`
			CertificateAuthority  string `json:"certificate-authority"`
			CAData                string `json:"certificate-authority-data"`
			TLSServerName         string `json:"tls-server-name"`
			InsecureSkipTLSVerify bool   `json:"insecure-skip-tls-verify"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string `json:"name"`
		User struct {
			ClientCertificate string `json:"client-certificate"`
			ClientCertData    string `json:"client-certificate-data"`
			ClientKey         string `json:"client-key"`
			ClientKeyData     string `json:"client-key-data"`
			Token             string `json:"token"`
			TokenFile         string `json:"tokenFile"`
		} `json:"user"`
	} `json:"users"`
	Contexts []struct {
		Name    string `json:"name"`
		Context struct {
			Cluster string `json:"cluster"`
			User    string `json:"user"`
		} `json:"context"`
	} `json:"contexts"`
	CurrentContext string `json:"current-context"`
}

// LoadKubeconfigClient reads the kubeconfig at path and returns the
// cluster and user of its current context. A file with no current-context
// but exactly one context uses that one. Relative file names inside are
// relative to the kubeconfig's directory. Every error wraps ErrKubeconfig
// and names the file.
func LoadKubeconfigClient(path string) (KubeconfigClient, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return KubeconfigClient{}, fmt.Errorf("%w: %w", ErrKubeconfig, err)
	}
	kc, err := ParseKubeconfigClient(data, filepath.Dir(path))
	if err != nil {
		return KubeconfigClient{}, fmt.Errorf("%s: %w", path, err)
	}
	return kc, nil
}

// ParseKubeconfigClient is LoadKubeconfigClient on the file's contents;
// dir resolves relative file names.
func ParseKubeconfigClient(data []byte, dir string) (KubeconfigClient, error) {
	var f kubeconfigFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return KubeconfigClient{}, fmt.Errorf("%w: %w", ErrKubeconfig, err)
	}
	fail := func(format string, args ...any) (KubeconfigClient, error) {
		return KubeconfigClient{}, fmt.Errorf("%w: "+format, append([]any{ErrKubeconfig}, args...)...)
	}
	ctxName := f.CurrentContext
	if ctxName == "" {
		if len(f.Contexts) != 1 {
			return fail("no current-context is set and the file has %d contexts", len(f.Contexts))
		}
		ctxName = f.Contexts[0].Name
	}
	ctxIdx := -1
	for i, c := range f.Contexts {
		if c.Name == ctxName {
			ctxIdx = i
			break
		}
	}
	if ctxIdx < 0 {
		return fail("context %q not found", ctxName)
	}
	cref, uref := f.Contexts[ctxIdx].Context.Cluster, f.Contexts[ctxIdx].Context.User
	var kc KubeconfigClient
	var err error
	found := false
	for _, c := range f.Clusters {
		if c.Name != cref {
			continue
		}
		found = true
		cl := c.Cluster
		kc.Server, kc.TLSServerName, kc.InsecureSkipTLSVerify = cl.Server, cl.TLSServerName, cl.InsecureSkipTLSVerify
		if kc.CAPEM, err = fileOrData(dir, cl.CertificateAuthority, cl.CAData, "certificate-authority"); err != nil {
			return KubeconfigClient{}, err
		}
		break
	}
	if !found {
		return fail("cluster %q of context %q not found", cref, ctxName)
	}
	if kc.Server == "" {
		return fail("cluster %q has no server defined", cref)
	}
	if kc.InsecureSkipTLSVerify && len(kc.CAPEM) > 0 {
		return fail("cluster %q: specifying a root certificates file with the insecure flag is not allowed", cref)
	}
	if uref != "" {
		found = false
		for _, u := range f.Users {
			if u.Name != uref {
				continue
			}
			found = true
			us := u.User
			if kc.ClientCertPEM, err = fileOrData(dir, us.ClientCertificate, us.ClientCertData, "client-certificate"); err != nil {
				return KubeconfigClient{}, err
			}
			if kc.ClientKeyPEM, err = fileOrData(dir, us.ClientKey, us.ClientKeyData, "client-key"); err != nil {
				return KubeconfigClient{}, err
			}
			kc.Token = us.Token
			if kc.Token == "" && us.TokenFile != "" {
				b, err := os.ReadFile(resolve(dir, us.TokenFile))
				if err != nil {
					return fail("user %q: tokenFile: %w", uref, err)
				}
				kc.Token = strings.TrimSpace(string(b))
			}
			break
		}
		if !found {
			return fail("user %q of context %q not found", uref, ctxName)
		}
	}
	if (len(kc.ClientCertPEM) == 0) != (len(kc.ClientKeyPEM) == 0) {
		return fail("user %q: client-certificate and client-key must be given together", uref)
	}
	return kc, nil
}

// fileOrData returns the inline base64 data of key, else the named file's
// contents; both set is an error as in every kubeconfig client.
func fileOrData(dir, file, data, key string) ([]byte, error) {
	if file != "" && data != "" {
		return nil, fmt.Errorf("%w: %s and %s-data are both specified; only one is allowed", ErrKubeconfig, key, key)
	}
	if data != "" {
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("%w: %s-data: %w", ErrKubeconfig, key, err)
		}
		return b, nil
	}
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(resolve(dir, file))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKubeconfig, key, err)
	}
	return b, nil
}

func resolve(dir, name string) string {
	if filepath.IsAbs(name) || dir == "" {
		return name
	}
	return filepath.Join(dir, name)
}
