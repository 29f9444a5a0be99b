package security

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// Kubeconfig is the content of a client configuration file with one
// cluster, one user and one context. The byte slices are PEM; they are not
// retained by WriteKubeconfig.
type Kubeconfig struct {
	// ClusterName and Server (an https:// URL) are required.
	ClusterName string
	Server      string
	// CAPEM is the CA bundle the client trusts for the server.
	CAPEM []byte
	// ClientCertPEM and ClientKeyPEM authenticate the user by certificate.
	ClientCertPEM []byte
	ClientKeyPEM  []byte
	// Token, when set, authenticates the user by bearer token.
	Token string
	// User and Context name the user and context entries; both default to
	// ClusterName.
	User    string
	Context string
}

// kubeconfig file shape; the []byte fields marshal as base64, which is what
// the *-data keys hold.
type kcFile struct {
	APIVersion     string      `json:"apiVersion"`
	Kind           string      `json:"kind"`
	Clusters       []kcCluster `json:"clusters"`
	Users          []kcUser    `json:"users"`
	Contexts       []kcContext `json:"contexts"`
	CurrentContext string      `json:"current-context"`
	Preferences    struct{}    `json:"preferences"`
}

type kcCluster struct {
	Name    string `json:"name"`
	Cluster struct {
		Server string `json:"server"`
		CAData []byte `json:"certificate-authority-data,omitempty"`
	} `json:"cluster"`
}

type kcUser struct {
	Name string `json:"name"`
	User struct {
		CertData []byte `json:"client-certificate-data,omitempty"`
		KeyData  []byte `json:"client-key-data,omitempty"`
		Token    string `json:"token,omitempty"`
	} `json:"user"`
}

type kcContext struct {
	Name    string `json:"name"`
	Context struct {
		Cluster string `json:"cluster"`
		User    string `json:"user"`
	} `json:"context"`
}

// MarshalKubeconfig returns kc as kubeconfig YAML (apiVersion v1, kind
// Config) with kc's context as current-context. It fails with an error
// wrapping ErrKubeconfig when ClusterName or Server is empty.
func MarshalKubeconfig(kc Kubeconfig) ([]byte, error) {
	if kc.ClusterName == "" || kc.Server == "" {
		return nil, fmt.Errorf("%w: cluster name and server are required", ErrKubeconfig)
	}
	user, ctx := kc.User, kc.Context
	if user == "" {
		user = kc.ClusterName
	}
	if ctx == "" {
		ctx = kc.ClusterName
	}
	f := kcFile{APIVersion: "v1", Kind: "Config", CurrentContext: ctx}
	var c kcCluster
	c.Name = kc.ClusterName
	c.Cluster.Server = kc.Server
	c.Cluster.CAData = kc.CAPEM
	var u kcUser
	u.Name = user
	u.User.CertData = kc.ClientCertPEM
	u.User.KeyData = kc.ClientKeyPEM
	u.User.Token = kc.Token
	var x kcContext
	x.Name = ctx
	x.Context.Cluster = kc.ClusterName
	x.Context.User = user
	f.Clusters = []kcCluster{c}
	f.Users = []kcUser{u}
	f.Contexts = []kcContext{x}
	return yaml.Marshal(f)
}

// WriteKubeconfig writes kc to path atomically, readable by the owner only
// because it may hold a private key or token.
func WriteKubeconfig(path string, kc Kubeconfig) error {
	f, err := StageKubeconfig(path, kc)
	if err != nil {
		return err
	}
	return f.Commit()
}

// StageKubeconfig is the first half of WriteKubeconfig: the file is
// written and synced beside path, and Commit puts it in place.
func StageKubeconfig(path string, kc Kubeconfig) (*StagedFile, error) {
	data, err := MarshalKubeconfig(kc)
	if err != nil {
		return nil, err
	}
	return stageFile(path, data, privateFileMode)
}
