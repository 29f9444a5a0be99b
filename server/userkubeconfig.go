package server

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"platd/config"
	"platd/security"
)

// UserKubeconfigOptions say whom `platd kubeconfig` writes a kubeconfig
// for.
type UserKubeconfigOptions struct {
	// DataDir is platd's data directory; CertDir its key material
	// directory, <DataDir>/pki when empty.
	DataDir, CertDir string
	Brand            config.Brand
	// User and Groups are the certificate's CN and O: the user name and
	// groups the server authenticates it as. User is required.
	User   string
	Groups []string
	// Server, when set, is the URL the kubeconfig points at; by default
	// the one of the admin kubeconfig in DataDir.
	Server string
}

// UserKubeconfig returns a kubeconfig that authenticates as o.User in
// o.Groups with a new one-year client certificate signed by the CA of the
// data directory. The server URL and the CA bundle that verifies the
// serving certificate come from the admin kubeconfig platd wrote there.
func UserKubeconfig(o UserKubeconfigOptions) ([]byte, error) {
	if o.User == "" {
		return nil, fmt.Errorf("%w: --user must not be empty", config.ErrInvalid)
	}
	certDir := o.CertDir
	if certDir == "" {
		certDir = filepath.Join(o.DataDir, "pki")
	}
	ca, err := security.LoadCA(certDir)
	if err != nil {
		return nil, fmt.Errorf("loading the CA (run platd serve with this data directory first): %w", err)
	}
	admin := (&config.Options{DataDir: o.DataDir}).KubeconfigPath()
	url, caPEM, err := clusterOf(admin)
	if err != nil {
		return nil, err
	}
	if o.Server != "" {
		url = o.Server
	}
	if url == "" {
		return nil, fmt.Errorf("%w: %s names no server: pass --server", config.ErrInvalid, admin)
	}
	if len(caPEM) == 0 {
		caPEM = ca.CertPEM()
	}
	certPEM, keyPEM, err := ca.IssueClientCert(o.User, o.Groups)
	if err != nil {
		return nil, fmt.Errorf("issuing the client certificate: %w", err)
	}
	return security.MarshalKubeconfig(security.Kubeconfig{
		ClusterName: o.Brand.ClusterName, Server: url, CAPEM: caPEM,
		ClientCertPEM: certPEM, ClientKeyPEM: keyPEM, User: o.User, Context: o.User + "@" + o.Brand.ClusterName,
	})
}

// clusterOf reads the server URL and CA bundle of a kubeconfig's first
// cluster; a missing file yields neither.
func clusterOf(path string) (url string, caPEM []byte, err error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var kc struct {
		Clusters []struct {
			Cluster struct {
				Server string `json:"server"`
				CAData []byte `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"clusters"`
	}
	if err := yaml.Unmarshal(b, &kc); err != nil {
		return "", nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(kc.Clusters) == 0 {
		return "", nil, nil
	}
	return kc.Clusters[0].Cluster.Server, kc.Clusters[0].Cluster.CAData, nil
}
