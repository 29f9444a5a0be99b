package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// validWebhook is an entry that passes every rule; cases change one thing.
func validWebhook(kubeconfig string) *WebhookConfiguration {
	return &WebhookConfiguration{
		Timeout: Duration{3 * time.Second}, AuthorizedTTL: Duration{time.Minute}, UnauthorizedTTL: Duration{time.Second},
		SubjectAccessReviewVersion: "v1", FailurePolicy: FailurePolicyNoOpinion,
		ConnectionInfo: WebhookConnectionInfo{Type: ConnectionKubeConfigFile, KubeConfigFile: ptr(kubeconfig)},
	}
}

func TestValidateAuthorizationConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kc := filepath.Join(dir, "kc")
	if err := os.WriteFile(kc, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	rbac := AuthorizerConfiguration{Type: ModeRBAC, Name: "rbac"}
	hook := func(mod func(w *WebhookConfiguration)) AuthorizerConfiguration {
		w := validWebhook(kc)
		if mod != nil {
			mod(w)
		}
		return AuthorizerConfiguration{Type: ModeWebhook, Name: "hook", Webhook: w}
	}
	const dnsMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
	many := make([]WebhookMatchCondition, 65)
	cases := []struct {
		name  string
		auths []AuthorizerConfiguration
		want  []string
	}{
		{"valid", []AuthorizerConfiguration{hook(nil), rbac, {Type: ModeNode, Name: "node"}}, nil},
		{"none", nil, []string{"authorizers: Required value: at least one authorization mode must be defined"}},
		{"no type", []AuthorizerConfiguration{{Name: "x"}}, []string{"authorizers[0].type: Required value"}},
		{"unknown type", []AuthorizerConfiguration{{Type: "Foo", Name: "x"}},
			[]string{`authorizers[0].type: Unsupported value: "Foo": supported values: "ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook"`}},
		{"repeated type", []AuthorizerConfiguration{rbac, rbac}, []string{`authorizers[1].type: Duplicate value: "RBAC"`}},
		{"webhooks repeat", []AuthorizerConfiguration{hook(nil), {Type: ModeWebhook, Name: "hook2", Webhook: validWebhook(kc)}}, nil},
		{"no name", []AuthorizerConfiguration{{Type: ModeRBAC}}, []string{"authorizers[0].name: Required value"}},
		{"duplicate name", []AuthorizerConfiguration{hook(nil), {Type: ModeWebhook, Name: "hook", Webhook: validWebhook(kc)}},
			[]string{`authorizers[1].name: Duplicate value: "hook"`}},
		{"bad name", []AuthorizerConfiguration{{Type: ModeWebhook, Name: "Hook_1", Webhook: validWebhook(kc)}},
			[]string{`authorizers[0].name: Invalid value: "Hook_1": authorizer name is invalid: ` + dnsMsg}},
		{"webhook missing", []AuthorizerConfiguration{{Type: ModeWebhook, Name: "hook"}}, []string{"authorizers[0].webhook: Required value: required when type=Webhook"}},
		{"webhook on rbac", []AuthorizerConfiguration{{Type: ModeRBAC, Name: "rbac", Webhook: validWebhook(kc)}},
			[]string{`authorizers[0].webhook: Invalid value: "non-null": may only be specified when type=Webhook`}},
		{"timeout missing", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.Timeout = Duration{} })}, []string{"authorizers[0].timeout: Required value"}},
		{"timeout too long", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.Timeout = Duration{31 * time.Second} })},
			[]string{`authorizers[0].timeout: Invalid value: "31s": must be > 0s and <= 30s`}},
		{"timeout negative", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.Timeout = Duration{-time.Second} })},
			[]string{`authorizers[0].timeout: Invalid value: "-1s": must be > 0s and <= 30s`}},
		{"ttls", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) {
			w.AuthorizedTTL, w.UnauthorizedTTL = Duration{-time.Second}, Duration{}
		})}, []string{`authorizers[0].authorizedTTL: Invalid value: "-1s": must be > 0s`, "authorizers[0].unauthorizedTTL: Required value"}},
		{"sar version missing", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.SubjectAccessReviewVersion = "" })},
			[]string{"authorizers[0].subjectAccessReviewVersion: Required value"}},
		{"sar version unknown", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.SubjectAccessReviewVersion = "v2" })},
			[]string{`authorizers[0].subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1"`}},
		{"match version required", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) {
			w.MatchConditions = []WebhookMatchCondition{{Expression: "true"}}
		})}, []string{"authorizers[0].matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified"}},
		{"match version v1beta1", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.MatchConditionSubjectAccessReviewVersion = "v1beta1" })},
			[]string{`authorizers[0].matchConditionSubjectAccessReviewVersion: Unsupported value: "v1beta1": supported values: "v1"`}},
		{"failure policy missing", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.FailurePolicy = "" })},
			[]string{"authorizers[0].failurePolicy: Required value"}},
		{"failure policy unknown", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.FailurePolicy = "Allow" })},
			[]string{`authorizers[0].failurePolicy: Unsupported value: "Allow": supported values: "NoOpinion", "Deny"`}},
		{"connection type missing", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.ConnectionInfo = WebhookConnectionInfo{} })},
			[]string{"authorizers[0].connectionInfo.type: Required value"}},
		{"connection type unknown", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.ConnectionInfo.Type = "URL" })},
			[]string{`authorizers[0].connectionInfo.type: Unsupported value: "URL": supported values: "InClusterConfig", "KubeConfigFile"`}},
		{"in-cluster with file", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.ConnectionInfo.Type = ConnectionInClusterConfig })},
			[]string{`authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "` + kc + `": can only be set when type=KubeConfigFile`}},
		{"kubeconfig missing", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.ConnectionInfo.KubeConfigFile = nil })},
			[]string{"authorizers[0].connectionInfo.kubeConfigFile: Required value"}},
		{"kubeconfig relative", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.ConnectionInfo.KubeConfigFile = ptr("kc") })},
			[]string{`authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "kc": must be an absolute path`}},
		{"kubeconfig absent", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.ConnectionInfo.KubeConfigFile = ptr(dir + "/nope") })},
			[]string{`authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "` + dir + `/nope": error loading file: stat ` + dir + `/nope: no such file or directory`}},
		{"kubeconfig directory", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) { w.ConnectionInfo.KubeConfigFile = ptr(dir) })},
			[]string{`authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "` + dir + `": must be a regular file`}},
		{"too many conditions", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) {
			w.MatchConditionSubjectAccessReviewVersion, w.MatchConditions = "v1", many
		})}, []string{"authorizers[0].matchConditions: Too many: 65: must have at most 64 items"}},
		{"empty and duplicate conditions", []AuthorizerConfiguration{hook(func(w *WebhookConfiguration) {
			w.MatchConditionSubjectAccessReviewVersion = "v1"
			w.MatchConditions = []WebhookMatchCondition{{Expression: " "}, {Expression: "true"}, {Expression: "true"}, {Expression: "bad"}}
		})}, []string{"authorizers[0].matchConditions[0].expression: Required value", `authorizers[0].matchConditions[2].expression: Duplicate value: "true"`,
			`authorizers[0].matchConditions[3].expression: Invalid value: "bad": nope`}},
	}
	check := func(expr string) *FieldError {
		if expr == "bad" {
			return &FieldError{Type: FieldInvalid, Value: expr, Detail: "nope"}
		}
		return nil
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			errs := ValidateAuthorizationConfig(&AuthorizationConfiguration{Authorizers: tc.auths}, check)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestDecodeAuthorizationConfig(t *testing.T) {
	t.Parallel()
	b := Brands["plat"]
	av := AuthorizationConfigAPIVersions(b)
	if av[0] != "apiserver.config."+b.Domain+"/v1" {
		t.Fatalf("apiVersion %q", av[0])
	}
	head := "apiVersion: " + av[0] + "\nkind: AuthorizationConfiguration\n"
	upstream := AuthorizationConfigAPIVersions(Brands["kubernetes"])[0]
	c, err := DecodeAuthorizationConfig([]byte(head+`authorizers:
- type: Webhook
  name: w
  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1
    failurePolicy: Deny
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: /x}
    matchConditions:
    - expression: has(request.resourceAttributes)
- type: RBAC
  name: rbac
`), b)
	if err != nil {
		t.Fatal(err)
	}
	w := c.Authorizers[0].Webhook
	if w.Timeout.Duration != 3*time.Second || w.AuthorizedTTL.Duration != 5*time.Minute || w.UnauthorizedTTL.Duration != 30*time.Second ||
		*w.ConnectionInfo.KubeConfigFile != "/x" || w.MatchConditions[0].Expression != "has(request.resourceAttributes)" || c.Authorizers[1].Webhook != nil {
		t.Fatalf("decoded %+v", w)
	}
	cases := []struct{ name, in, wantErr string }{
		{"v1beta1", "apiVersion: " + av[1] + "\nkind: AuthorizationConfiguration\nauthorizers: []\n", ""},
		{"v1alpha1", "apiVersion: " + av[2] + "\nkind: AuthorizationConfiguration\nauthorizers: []\n", ""},
		{"json", `{"apiVersion":"` + av[0] + `","kind":"AuthorizationConfiguration","authorizers":[{"type":"RBAC","name":"rbac"}]}`, ""},
		{"unknown field", head + "authorizers:\n- type: RBAC\n  nam: rbac\n", `strict decoding error: unknown field "authorizers[0].nam"`},
		{"duplicate key", head + "authorizers: []\nauthorizers: []\n", `key "authorizers" already set in map`},
		{"bad duration", head + "authorizers:\n- webhook: {timeout: 3x}\n", `time: unknown unit "x" in duration "3x"`},
		{"duration of wrong type", head + "authorizers:\n- webhook: {timeout: 3}\n", "authorizers[0].webhook.timeout: must be a string, got a number"},
		{"wrong type", head + "authorizers: {}\n", "authorizers: must be a list, got an object"},
		{"other brand", "apiVersion: " + upstream + "\nkind: AuthorizationConfiguration\n", `no kind "AuthorizationConfiguration" is registered for version "` + upstream + `"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeAuthorizationConfig([]byte(tc.in), b)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestOptionsAuthorizationFlags(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		mod  func(o *Options)
		want string
	}{
		{"webhook mode needs the file", func(o *Options) { o.AuthorizationModes = []string{ModeWebhook} },
			"authorization-mode Webhook's authorization config file not passed"},
		{"file needs the mode", func(o *Options) { o.AuthorizationWebhook.ConfigFile = "/kc" },
			"cannot specify --authorization-webhook-config-file without mode Webhook"},
		{"version", func(o *Options) {
			o.AuthorizationModes, o.AuthorizationWebhook = []string{ModeWebhook}, AuthorizationWebhook{ConfigFile: "/kc", Version: "v2"}
		}, `--authorization-webhook-version: unsupported authorization webhook version "v2", supported versions are "v1", "v1beta1"`},
		{"config with mode", func(o *Options) { o.AuthorizationConfigFile, o.AuthorizationModesSet = "/a", true },
			"--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined"},
		{"config with webhook flag", func(o *Options) {
			o.AuthorizationConfigFile, o.AuthorizationWebhook.Set = "/a", []string{"authorization-webhook-version"}
		}, "--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined"},
		{"config alone", func(o *Options) { o.AuthorizationConfigFile = "/a" }, ""},
		{"config with a policy file for its ABAC entry", func(o *Options) {
			o.AuthorizationConfigFile, o.AuthorizationPolicyFile = "/a", "/nonexistent/policy.jsonl"
		}, "--authorization-policy-file: "},
		{"webhook mode", func(o *Options) {
			o.AuthorizationModes, o.AuthorizationWebhook.ConfigFile = []string{ModeWebhook}, "/kc"
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := validOptions()
			tc.mod(&o)
			err := o.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				w := o.AuthorizationWebhook
				if w.Version != "v1beta1" || w.AuthorizedTTL != 5*time.Minute || w.UnauthorizedTTL != 30*time.Second {
					t.Fatalf("defaults: %+v", w)
				}
				if o.AuthorizationConfigFile != "" && o.AuthorizationModes != nil {
					t.Fatalf("modes kept with the file: %v", o.AuthorizationModes)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func FuzzAuthorizationConfig(f *testing.F) {
	b := Brands["plat"]
	head := "apiVersion: " + AuthorizationConfigAPIVersions(b)[0] + "\nkind: AuthorizationConfiguration\n"
	f.Add(head + "authorizers:\n- type: Webhook\n  name: w\n  webhook:\n    timeout: 3s\n    subjectAccessReviewVersion: v1\n    failurePolicy: Deny\n    connectionInfo: {type: KubeConfigFile, kubeConfigFile: /x}\n    matchConditions: [{expression: 'true'}]\n")
	f.Add(head + "authorizers: [{type: RBAC, name: rbac}, {type: Node, name: Node_1, webhook: {}}]\n")
	f.Add(head + "authorizers: [{type: Webhook, name: w, webhook: {timeout: -1h, authorizedTTL: 1s, connectionInfo: {type: InClusterConfig, kubeConfigFile: ''}}}]\n")
	f.Add("{}")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := DecodeAuthorizationConfig([]byte(in), b)
		if err != nil {
			return
		}
		for _, e := range ValidateAuthorizationConfig(c, nil) {
			if e.Field == "" || e.Error() == "" {
				t.Fatalf("error without field: %+v", e)
			}
		}
	})
}
