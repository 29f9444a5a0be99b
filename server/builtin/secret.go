package builtin

import (
	"encoding/json"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
)

// Data keys the typed secrets require.
const (
	dockerConfigKey     = ".dockercfg"
	dockerConfigJSONKey = ".dockerconfigjson"
	basicAuthUsername   = "username"
	basicAuthPassword   = "password"
	sshAuthPrivateKey   = "ssh-privatekey"
	tlsCertKey          = "tls.crt"
	tlsPrivateKeyKey    = "tls.key"
)

// redacted stands for secret contents in error values.
const redacted = "<secret contents redacted>"

// secretRules holds the secret types with rules of their own; their names
// live under the brand's long domain.
type secretRules struct {
	serviceAccountToken, dockercfg, dockerConfigJSON, basicAuth, sshAuth, tls string
	// bootstrapToken is the type of bootstrap token secrets.
	bootstrapToken string
	// serviceAccountName is the annotation a token secret must carry.
	serviceAccountName string
}

func newSecretRules(b config.Brand) secretRules {
	return secretRules{
		serviceAccountToken: b.Label("service-account-token"),
		dockercfg:           b.Label("dockercfg"),
		dockerConfigJSON:    b.Label("dockerconfigjson"),
		basicAuth:           b.Label("basic-auth"),
		sshAuth:             b.Label("ssh-auth"),
		tls:                 b.Label("tls"),
		serviceAccountName:  b.Label("service-account.name"),
		bootstrapToken:      b.BootstrapTokenType(),
	}
}

// validate checks a secret's data keys, its total size and the keys its
// type requires.
func (r secretRules) validate(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	data, _ := obj["data"].(map[string]any)
	total := 0
	for _, k := range sortedKeys(data) {
		for _, msg := range configKeyErrors(k) {
			errs = append(errs, apierr.Invalid("data["+k+"]", k, msg))
		}
		total += len(decodedBytes(data[k]))
	}
	if total > maxDataSize {
		errs = append(errs, apierr.TooLong("data", maxDataSize))
	}
	has := func(k string) bool { _, ok := data[k]; return ok }
	required := func(k string) { errs = append(errs, apierr.Required("data["+k+"]", "")) }
	jsonObject := func(k string) {
		if !has(k) {
			required(k)
			return
		}
		if err := json.Unmarshal(decodedBytes(data[k]), &map[string]any{}); err != nil {
			errs = append(errs, apierr.Invalid("data["+k+"]", redacted, err.Error()))
		}
	}
	switch str(obj, "type") {
	case r.serviceAccountToken:
		if str(obj, "metadata", "annotations", r.serviceAccountName) == "" {
			errs = append(errs, apierr.Required("metadata.annotations["+r.serviceAccountName+"]", ""))
		}
	case r.dockercfg:
		jsonObject(dockerConfigKey)
	case r.dockerConfigJSON:
		jsonObject(dockerConfigJSONKey)
	case r.basicAuth:
		// Either may be empty, but one of them must be there.
		if !has(basicAuthUsername) && !has(basicAuthPassword) {
			required(basicAuthUsername)
			required(basicAuthPassword)
		}
	case r.sshAuth:
		if len(decodedBytes(data[sshAuthPrivateKey])) == 0 {
			required(sshAuthPrivateKey)
		}
	case r.bootstrapToken:
		errs = append(errs, validateBootstrapToken(obj)...)
	case r.tls:
		if !has(tlsCertKey) {
			required(tlsCertKey)
		}
		if !has(tlsPrivateKeyKey) {
			required(tlsPrivateKeyKey)
		}
	}
	return errs
}
