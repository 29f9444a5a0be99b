package config

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/yaml"
)

// The ImagePolicyWebhook plugin's defaults and bounds, as upstream. A
// value of 0 in the file is the default, -1 turns the setting off (no
// caching of that kind of answer, no wait between retries).
const (
	DefaultImagePolicyAllowTTL     = 5 * time.Minute
	DefaultImagePolicyDenyTTL      = 30 * time.Second
	DefaultImagePolicyRetryBackoff = 500 * time.Millisecond

	imagePolicyMinTTL     = time.Second
	imagePolicyMaxTTL     = 30 * time.Minute
	imagePolicyMinBackoff = time.Nanosecond
	imagePolicyMaxBackoff = 5 * time.Minute
)

// ImagePolicyWebhookConfiguration is the ImagePolicyWebhook plugin's
// configuration, loaded: the backend the image reviews are sent to and
// how its answers are kept.
type ImagePolicyWebhookConfiguration struct {
	// KubeConfigFile is the kubeconfig file naming the backend, as
	// configured; Client is what it says.
	KubeConfigFile string
	Client         KubeconfigClient
	// AllowTTL and DenyTTL are how long allowing and denying answers are
	// remembered, for the same review; 0 remembers none of that kind.
	AllowTTL, DenyTTL time.Duration
	// RetryBackoff is the first wait before a failed call is retried.
	RetryBackoff time.Duration
	// DefaultAllow admits pods when the backend cannot be asked.
	DefaultAllow bool
}

// imagePolicyFile is the plugin's configuration as written, upstream's
// unversioned format; the type names are upstream's, which its decoding
// errors print.
type imagePolicyFile struct {
	ImagePolicyWebhook imagePolicyWebhookConfig `json:"imagePolicy"`
}

// imagePolicyWebhookConfig holds the TTLs in seconds and the backoff in
// milliseconds, as JSON integers.
type imagePolicyWebhookConfig struct {
	KubeConfigFile string        `json:"kubeConfigFile"`
	AllowTTL       time.Duration `json:"allowTTL"`
	DenyTTL        time.Duration `json:"denyTTL"`
	RetryBackoff   time.Duration `json:"retryBackoff"`
	DefaultAllow   bool          `json:"defaultAllow"`
}

// errNoKubeconfig is upstream's message when the configuration names no
// kubeconfig file and no default client configuration is found.
var errNoKubeconfig = errors.New("invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable")

// decodeImagePolicyWebhookPlugin reads the ImagePolicyWebhook
// configuration, required when the plugin runs: leniently, JSON or YAML,
// as upstream. The durations are normalized and bounded, and the
// kubeconfig is read, so that a bad one stops the start.
func decodeImagePolicyWebhookPlugin(data []byte, _ Brand, into *AdmissionPlugins) error {
	into.ImagePolicyWebhook = nil
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("no config specified")
	}
	var f imagePolicyFile
	var err error
	if trimmed := bytes.TrimSpace(data); trimmed[0] == '{' {
		err = json.Unmarshal(trimmed, &f)
	} else {
		err = yaml.Unmarshal(data, &f)
	}
	if err != nil {
		return err
	}
	w := f.ImagePolicyWebhook
	c := &ImagePolicyWebhookConfiguration{KubeConfigFile: w.KubeConfigFile, DefaultAllow: w.DefaultAllow}
	if c.RetryBackoff, err = imagePolicyDuration(w.RetryBackoff, time.Millisecond, imagePolicyMinBackoff, imagePolicyMaxBackoff, DefaultImagePolicyRetryBackoff); err != nil {
		return err
	}
	if c.AllowTTL, err = imagePolicyDuration(w.AllowTTL, time.Second, imagePolicyMinTTL, imagePolicyMaxTTL, DefaultImagePolicyAllowTTL); err != nil {
		return err
	}
	if c.DenyTTL, err = imagePolicyDuration(w.DenyTTL, time.Second, imagePolicyMinTTL, imagePolicyMaxTTL, DefaultImagePolicyDenyTTL); err != nil {
		return err
	}
	if c.KubeConfigFile == "" {
		return errNoKubeconfig
	}
	if c.Client, err = LoadKubeconfigClient(c.KubeConfigFile); err != nil {
		return err
	}
	if err := checkKubeconfigTLS(c.Client); err != nil {
		return err
	}
	into.ImagePolicyWebhook = c
	return nil
}

// imagePolicyDuration is a configured value in units of unit: -1 is
// off (0), 0 the default, anything else must be above lo and at most hi,
// with upstream's message.
func imagePolicyDuration(v, unit, lo, hi, def time.Duration) (time.Duration, error) {
	switch v {
	case -1:
		return 0, nil
	case 0:
		return def, nil
	}
	v *= unit
	if v <= lo || v > hi {
		return v, fmt.Errorf("valid value is between %v and %v, got %v", lo, hi, v)
	}
	return v, nil
}

// checkKubeconfigTLS parses the certificates of kc, which a client
// would fail on at its first call.
func checkKubeconfigTLS(kc KubeconfigClient) error {
	if len(kc.CAPEM) > 0 && !x509.NewCertPool().AppendCertsFromPEM(kc.CAPEM) {
		return fmt.Errorf("%w: unable to load root certificates: no certificates found", ErrKubeconfig)
	}
	if len(kc.ClientCertPEM) > 0 || len(kc.ClientKeyPEM) > 0 {
		if _, err := tls.X509KeyPair(kc.ClientCertPEM, kc.ClientKeyPEM); err != nil {
			return fmt.Errorf("%w: %w", ErrKubeconfig, err)
		}
	}
	return nil
}
