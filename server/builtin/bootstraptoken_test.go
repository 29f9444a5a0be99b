package builtin

import (
	"maps"
	"testing"

	"platd/config"
	"platd/security"
	"platd/server/registry"
)

func TestBootstrapTokenSecretValidate(t *testing.T) {
	t.Parallel()
	const groupsMsg = `bootstrap group "system:masters" is invalid (must match \Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z)`
	for _, bn := range config.BrandNames() {
		b := config.Brands[bn]
		d := descriptor(t, b, "Secret")
		valid := map[string]any{
			"token-id": b64("abc123"), "token-secret": b64("0123456789abcdef"),
			"usage-bootstrap-authentication": b64("true"), "usage-bootstrap-signing": b64("true"),
			"expiration": b64("2030-01-02T03:04:05Z"), "description": b64("joins node 7"),
			"auth-extra-groups": b64("system:bootstrappers:worker,system:bootstrappers:a:b-c"),
		}
		secret := func(name string, change func(data map[string]any)) registry.Object {
			data := maps.Clone(valid)
			if change != nil {
				change(data)
			}
			return registry.Object{"metadata": map[string]any{"name": name, "namespace": b.SystemNamespace}, "type": b.BootstrapTokenType(), "data": data}
		}
		set := func(k, v string) func(map[string]any) { return func(m map[string]any) { m[k] = b64(v) } }
		drop := func(k string) func(map[string]any) { return func(m map[string]any) { delete(m, k) } }
		tests := []struct {
			name string
			obj  registry.Object
			want []string
		}{
			{"valid", secret("bootstrap-token-abc123", nil), nil},
			{"minimal", secret("bootstrap-token-abc123", func(m map[string]any) {
				for _, k := range []string{"expiration", "description", "auth-extra-groups", "usage-bootstrap-signing", "usage-bootstrap-authentication"} {
					delete(m, k)
				}
			}), nil},
			{"no id", secret("bootstrap-token-abc123", drop("token-id")), []string{"data[token-id]: Required value"}},
			{"bad id", secret("bootstrap-token-ABC123", set("token-id", "ABC123")), []string{`data[token-id]: Invalid value: "ABC123": must match \A([a-z0-9]{6})\z`}},
			{"name not the id's", secret("my-token", nil), []string{`metadata.name: Invalid value: "my-token": must be bootstrap-token-abc123, the name of the secret of token abc123`}},
			{"no secret", secret("bootstrap-token-abc123", drop("token-secret")), []string{"data[token-secret]: Required value"}},
			{"short secret", secret("bootstrap-token-abc123", set("token-secret", "0123")), []string{
				`data[token-secret]: Invalid value: "<secret contents redacted>": must match [a-z0-9]{16}`,
			}},
			{"bad expiration", secret("bootstrap-token-abc123", set("expiration", "2030-01-02")), []string{
				`data[expiration]: Invalid value: "2030-01-02": must be a time in RFC3339 format (e.g. 2006-01-02T15:04:05Z)`,
			}},
			{"bad group", secret("bootstrap-token-abc123", set("auth-extra-groups", "system:bootstrappers:ok,system:masters")), []string{
				`data[auth-extra-groups]: Invalid value: "system:bootstrappers:ok,system:masters": ` + groupsMsg,
			}},
			{"unknown usage", secret("bootstrap-token-abc123", set("usage-bootstrap-login", "true")), []string{
				`data[usage-bootstrap-login]: Invalid value: "usage-bootstrap-login": invalid bootstrap token usage string: login, valid usage options: signing,authentication`,
			}},
			{"other types are not checked", registry.Object{"metadata": map[string]any{"name": "x"}, "type": "Opaque", "data": map[string]any{"token-id": b64("X")}}, nil},
		}
		for _, tt := range tests {
			checkErrs(t, bn+": "+tt.name, d.Strategy.Validate(tt.obj), tt.want)
		}
		// Updates are held to the same rules.
		checkErrs(t, bn+": update", d.Strategy.ValidateUpdate(secret("bootstrap-token-abc123", set("token-secret", "x")), secret("bootstrap-token-abc123", nil)),
			[]string{`data[token-secret]: Invalid value: "<secret contents redacted>": must match [a-z0-9]{16}`})
	}
}

// FuzzBootstrapTokenSecret checks that any data is refused with field
// errors, never a panic, and that an accepted secret holds a token the
// authenticator can parse, named for its id.
func FuzzBootstrapTokenSecret(f *testing.F) {
	f.Add("abc123", "0123456789abcdef", "2030-01-02T03:04:05Z", "system:bootstrappers:a", "signing")
	f.Add("ABC", "", "x", ",", "")
	f.Fuzz(func(t *testing.T, id, secret, exp, groups, usage string) {
		obj := registry.Object{
			"metadata": map[string]any{"name": "bootstrap-token-" + id},
			"type":     brand.BootstrapTokenType(),
			"data": map[string]any{"token-id": b64(id), "token-secret": b64(secret), "expiration": b64(exp),
				"auth-extra-groups": b64(groups), "usage-bootstrap-" + usage: b64("true")},
		}
		if errs := validateBootstrapToken(obj); len(errs) == 0 {
			if _, _, ok := security.ParseBootstrapToken(id + "." + secret); !ok {
				t.Fatalf("accepted a secret whose token %q.%q does not parse", id, secret)
			}
		}
	})
}
