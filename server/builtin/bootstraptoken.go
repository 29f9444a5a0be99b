package builtin

import (
	"slices"
	"strings"
	"time"

	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
)

// validateBootstrapToken checks the keys of a bootstrap token secret, so
// that a token that could never authenticate or sign is refused when it is
// written rather than ignored when it is used: the id and secret formats,
// the name the id implies, the expiration timestamp, the usages and the
// extra groups, with the texts of upstream's token helpers.
func validateBootstrapToken(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	data, _ := obj["data"].(map[string]any)
	value := func(k string) (string, bool) {
		v, ok := data[k]
		return string(decodedBytes(v)), ok
	}
	path := func(k string) string { return "data[" + k + "]" }

	id, ok := value(security.BootstrapTokenIDKey)
	switch {
	case !ok:
		errs = append(errs, apierr.Required(path(security.BootstrapTokenIDKey), ""))
	case !security.ValidBootstrapTokenID(id):
		errs = append(errs, apierr.Invalid(path(security.BootstrapTokenIDKey), id, "must match "+security.BootstrapTokenIDPattern))
	default:
		if want, name := security.BootstrapTokenSecretName(id), str(obj, "metadata", "name"); name != want {
			errs = append(errs, apierr.Invalid("metadata.name", name, "must be "+want+", the name of the secret of token "+id))
		}
	}
	if s, ok := value(security.BootstrapTokenSecretKey); !ok {
		errs = append(errs, apierr.Required(path(security.BootstrapTokenSecretKey), ""))
	} else if !security.ValidBootstrapTokenSecret(s) {
		errs = append(errs, apierr.Invalid(path(security.BootstrapTokenSecretKey), redacted, "must match [a-z0-9]{16}"))
	}
	if exp, ok := value(security.BootstrapTokenExpirationKey); ok {
		if _, err := time.Parse(time.RFC3339, exp); err != nil {
			errs = append(errs, apierr.Invalid(path(security.BootstrapTokenExpirationKey), exp, "must be a time in RFC3339 format (e.g. 2006-01-02T15:04:05Z)"))
		}
	}
	if groups, ok := value(security.BootstrapTokenExtraGroupsKey); ok && groups != "" {
		for _, g := range strings.Split(groups, ",") {
			if err := security.ValidateBootstrapGroup(g); err != nil {
				errs = append(errs, apierr.Invalid(path(security.BootstrapTokenExtraGroupsKey), groups, err.Error()))
			}
		}
	}
	for _, k := range sortedKeys(data) {
		usage, ok := strings.CutPrefix(k, security.BootstrapTokenUsagePrefix)
		if ok && !slices.Contains(security.KnownBootstrapUsages, usage) {
			errs = append(errs, apierr.Invalid(path(k), k, "invalid bootstrap token usage string: "+usage+
				", valid usage options: "+strings.Join(security.KnownBootstrapUsages, ",")))
		}
	}
	return errs
}
