package security

import (
	"strings"
	"testing"

	"platd/config"
)

func TestJWTExpressionValidation(t *testing.T) {
	t.Parallel()
	b := config.Brands["plat"]
	base := func() config.JWTAuthenticator {
		return config.JWTAuthenticator{
			Issuer:        config.Issuer{URL: "https://issuer.example.com", Audiences: []string{"platd"}},
			ClaimMappings: config.ClaimMappings{Username: config.PrefixedClaimOrExpression{Expression: "claims.sub"}},
		}
	}
	cases := []struct {
		name   string
		mutate func(a *config.JWTAuthenticator)
		want   []string
	}{
		{"valid", func(a *config.JWTAuthenticator) {
			a.ClaimValidationRules = []config.ClaimValidationRule{{Expression: "claims.?tenant.hasValue() && sets.contains([1], [1]) && 'a'.lowerAscii() == 'a'"}}
			a.ClaimMappings.Groups.Expression = "claims.groups"
			a.ClaimMappings.UID.Expression = "claims.sub"
			a.ClaimMappings.Extra = []config.ExtraMapping{{Key: "example.com/x", ValueExpression: "claims.all(k, v, k != '')"}}
			a.UserValidationRules = []config.UserValidationRule{{Expression: "user.username != '' && user.groups.all(g, g != '') && user.extra.size() >= 0 && user.uid == ''"}}
		}, nil},
		{"standard functions", func(a *config.JWTAuthenticator) {
			a.ClaimValidationRules = []config.ClaimValidationRule{{Expression: "claims.sub.matches('^a') && claims.exp > 1.5"}}
		}, nil},
		{"syntax error", func(a *config.JWTAuthenticator) {
			a.ClaimValidationRules = []config.ClaimValidationRule{{Expression: "claims.("}}
		}, []string{`jwt[0].claimValidationRules[0].expression: Invalid value: "claims.(": compilation failed: ERROR: <input>:1:8: Syntax error:`}},
		{"claim rule must be bool", func(a *config.JWTAuthenticator) {
			a.ClaimValidationRules = []config.ClaimValidationRule{{Expression: "'x'"}}
		}, []string{`jwt[0].claimValidationRules[0].expression: Invalid value: "'x'": must evaluate to bool`}},
		{"a dyn result is not a bool", func(a *config.JWTAuthenticator) {
			a.ClaimValidationRules = []config.ClaimValidationRule{{Expression: "claims.flag"}}
		}, []string{`jwt[0].claimValidationRules[0].expression: Invalid value: "claims.flag": must evaluate to bool`}},
		{"user rule must be bool, and sees no claims", func(a *config.JWTAuthenticator) {
			a.UserValidationRules = []config.UserValidationRule{{Expression: "user.username"}, {Expression: "claims.sub == ''"}}
		}, []string{`jwt[0].userValidationRules[0].expression: Invalid value: "user.username": must evaluate to bool`,
			`jwt[0].userValidationRules[1].expression: Invalid value: "claims.sub == ''": compilation failed: ERROR: <input>:1:1: undeclared reference to 'claims'`}},
		{"user has no such field", func(a *config.JWTAuthenticator) {
			a.UserValidationRules = []config.UserValidationRule{{Expression: "user.name == ''"}}
		}, []string{`jwt[0].userValidationRules[0].expression: Invalid value: "user.name == ''": compilation failed: ERROR: <input>:1:5: undefined field 'name'`}},
		{"mapping compile errors name their field", func(a *config.JWTAuthenticator) {
			a.ClaimMappings.Username.Expression = "nope"
			a.ClaimMappings.Groups.Expression = "nope2"
			a.ClaimMappings.UID.Expression = "nope3"
			a.ClaimMappings.Extra = []config.ExtraMapping{{Key: "example.com/x", ValueExpression: "nope4"}}
		}, []string{`jwt[0].claimMappings.username.expression: Invalid value: "nope": compilation failed`,
			`jwt[0].claimMappings.groups.expression: Invalid value: "nope2": compilation failed`,
			`jwt[0].claimMappings.uid.expression: Invalid value: "nope3": compilation failed`,
			`jwt[0].claimMappings.extra[0].valueExpression: Invalid value: "nope4": compilation failed`}},
		{"email without email_verified", func(a *config.JWTAuthenticator) {
			a.ClaimMappings.Username.Expression = "claims.email"
		}, []string{`jwt[0].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression`}},
		{"email with email_verified in a rule", func(a *config.JWTAuthenticator) {
			a.ClaimMappings.Username.Expression = "claims.email"
			a.ClaimValidationRules = []config.ClaimValidationRule{{Expression: "claims.?email_verified.orValue(false) == true"}}
		}, nil},
		{"email with email_verified in an extra", func(a *config.JWTAuthenticator) {
			a.ClaimMappings.Username.Expression = "claims.?email.orValue('x')"
			a.ClaimMappings.Extra = []config.ExtraMapping{{Key: "example.com/v", ValueExpression: "string(claims['email_verified'])"}}
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := base()
			tc.mutate(&a)
			_, err := BuildJWTAuthenticators(&config.AuthenticationConfiguration{JWT: []config.JWTAuthenticator{a}},
				JWTOptions{Brand: b})
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			ferrs, ok := err.(config.FieldErrors)
			if !ok || len(ferrs) != len(tc.want) {
				t.Fatalf("err = %v, want %d field errors", err, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(ferrs[i].Error(), w) {
					t.Errorf("error %d = %s\nwant prefix %s", i, ferrs[i], w)
				}
			}
		})
	}
}
