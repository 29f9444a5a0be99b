package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// AuthenticationConfigurationKind is the kind of an --authentication-config
// file.
const AuthenticationConfigurationKind = "AuthenticationConfiguration"

// MaxJWTAuthenticators is the most jwt entries one file may hold.
const MaxJWTAuthenticators = 64

// AudienceMatchAny is the only audienceMatchPolicy value.
const AudienceMatchAny = "MatchAny"

// ErrAuthenticationConfig is wrapped by every error of loading an
// authentication configuration file.
var ErrAuthenticationConfig = errors.New("invalid authentication configuration")

// AuthenticationConfiguration is the --authentication-config file. The
// v1beta1 and v1alpha1 shapes hold the same fields.
type AuthenticationConfiguration struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	JWT        []JWTAuthenticator   `json:"jwt"`
	Anonymous  *AnonymousAuthConfig `json:"anonymous,omitempty"`
}

// AnonymousAuthConfig is the file's anonymous section: when set it replaces
// --anonymous-auth.
type AnonymousAuthConfig struct {
	Enabled    bool                     `json:"enabled"`
	Conditions []AnonymousAuthCondition `json:"conditions,omitempty"`
}

// AnonymousAuthCondition limits anonymous requests to one exact path.
type AnonymousAuthCondition struct {
	Path string `json:"path"`
}

// JWTAuthenticator configures one issuer of JWTs.
type JWTAuthenticator struct {
	Issuer               Issuer                `json:"issuer"`
	ClaimValidationRules []ClaimValidationRule `json:"claimValidationRules,omitempty"`
	ClaimMappings        ClaimMappings         `json:"claimMappings"`
	UserValidationRules  []UserValidationRule  `json:"userValidationRules,omitempty"`
}

// Issuer says whose tokens a JWTAuthenticator accepts and how to reach it.
type Issuer struct {
	URL                  string   `json:"url"`
	DiscoveryURL         string   `json:"discoveryURL,omitempty"`
	CertificateAuthority string   `json:"certificateAuthority,omitempty"`
	Audiences            []string `json:"audiences"`
	AudienceMatchPolicy  string   `json:"audienceMatchPolicy,omitempty"`
}

// ClaimValidationRule is either a claim that must equal RequiredValue or a
// CEL expression over claims that must be true.
type ClaimValidationRule struct {
	Claim         string `json:"claim,omitempty"`
	RequiredValue string `json:"requiredValue,omitempty"`
	Expression    string `json:"expression,omitempty"`
	Message       string `json:"message,omitempty"`
}

// ClaimMappings turns claims into the user's attributes.
type ClaimMappings struct {
	Username PrefixedClaimOrExpression `json:"username"`
	Groups   PrefixedClaimOrExpression `json:"groups,omitempty"`
	UID      ClaimOrExpression         `json:"uid,omitempty"`
	Extra    []ExtraMapping            `json:"extra,omitempty"`
}

// PrefixedClaimOrExpression is a claim with a prefix, or an expression.
// Prefix is a pointer because "" (no prefix) and absent differ.
type PrefixedClaimOrExpression struct {
	Claim      string  `json:"claim,omitempty"`
	Prefix     *string `json:"prefix,omitempty"`
	Expression string  `json:"expression,omitempty"`
}

// ClaimOrExpression is a claim or an expression.
type ClaimOrExpression struct {
	Claim      string `json:"claim,omitempty"`
	Expression string `json:"expression,omitempty"`
}

// ExtraMapping fills one user-extra key from an expression.
type ExtraMapping struct {
	Key             string `json:"key"`
	ValueExpression string `json:"valueExpression"`
}

// UserValidationRule is a CEL expression over the mapped user that must be
// true.
type UserValidationRule struct {
	Expression string `json:"expression"`
	Message    string `json:"message,omitempty"`
}

// AuthenticationConfigAPIVersions lists the apiVersions a file may declare.
func AuthenticationConfigAPIVersions(b Brand) []string {
	g := b.Group("apiserver.config")
	return []string{g + "/v1beta1", g + "/v1alpha1"}
}

// LoadAuthenticationConfig reads and decodes path strictly. It does not
// run the semantic validation (ValidateAuthenticationConfig) nor compile
// expressions.
func LoadAuthenticationConfig(path string, b Brand) (*AuthenticationConfiguration, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrAuthenticationConfig, err)
	}
	c, err := DecodeAuthenticationConfig(data, b)
	if err != nil {
		return nil, data, fmt.Errorf("%w: %s: %w", ErrAuthenticationConfig, path, err)
	}
	return c, data, nil
}

// DecodeAuthenticationConfig decodes YAML or JSON strictly: duplicate and
// unknown fields are errors naming the field path, YAML syntax errors name
// the line.
func DecodeAuthenticationConfig(data []byte, b Brand) (*AuthenticationConfiguration, error) {
	var c AuthenticationConfiguration
	if err := decodeStrict(data, &c, AuthenticationConfigurationKind, AuthenticationConfigAPIVersions(b)); err != nil {
		return nil, err
	}
	return &c, nil
}

// decodeStrict decodes a configuration file of kind in one of apiVersions
// into out (a pointer to its struct): YAML or JSON, unknown fields and
// values of the wrong type are errors naming the field path, YAML syntax
// errors name the line.
func decodeStrict(data []byte, out any, kind string, apiVersions []string) error {
	return decodeConfigFile(data, out, kind, apiVersions, true)
}

// decodeLenient is decodeStrict for the files upstream decodes leniently:
// unknown fields are ignored, a duplicate key's last value wins; values of
// the wrong type are still errors.
func decodeLenient(data []byte, out any, kind string, apiVersions []string) error {
	return decodeConfigFile(data, out, kind, apiVersions, false)
}

func decodeConfigFile(data []byte, out any, kind string, apiVersions []string, strict bool) error {
	toJSON := yaml.YAMLToJSON
	if strict {
		toJSON = yaml.YAMLToJSONStrict
	}
	js, err := toJSON(data)
	if err != nil {
		return err
	}
	var generic any
	if err := json.Unmarshal(js, &generic); err != nil {
		return err
	}
	top, ok := generic.(map[string]any)
	if !ok {
		return fmt.Errorf("expected an object with apiVersion and kind")
	}
	apiVersion, _ := top["apiVersion"].(string)
	gotKind, _ := top["kind"].(string)
	if gotKind != kind || !contains(apiVersions, apiVersion) {
		return fmt.Errorf("no kind %q is registered for version %q: want kind %s in %s",
			gotKind, apiVersion, kind, strings.Join(apiVersions, " or "))
	}
	t := reflect.TypeOf(out).Elem()
	if unknown := unknownFields(generic, t, ""); strict && len(unknown) > 0 {
		quoted := make([]string, len(unknown))
		for i, u := range unknown {
			quoted[i] = fmt.Sprintf("unknown field %q", u)
		}
		return fmt.Errorf("strict decoding error: %s", strings.Join(quoted, ", "))
	}
	if bad := typeMismatches(generic, t, ""); len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, ", "))
	}
	if !strict {
		// Go's decoder matches names without regard to case; upstream's
		// does not, so members not spelled as a field are dropped first.
		if js, err = json.Marshal(dropUnknownFields(generic, t)); err != nil {
			return err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	if err := dec.Decode(out); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("field %s: cannot use a JSON %s as %s", te.Field, te.Value, te.Type)
		}
		return err
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// dropUnknownFields removes from v, in place, the object members that t
// has no json field of that exact name for, and returns v.
func dropUnknownFields(v any, t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch val := v.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return v
		}
		fields := map[string]reflect.Type{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				fields[name] = f.Type
			}
		}
		for k, e := range val {
			if ft, ok := fields[k]; ok {
				val[k] = dropUnknownFields(e, ft)
			} else {
				delete(val, k)
			}
		}
	case []any:
		if t.Kind() == reflect.Slice {
			for i, e := range val {
				val[i] = dropUnknownFields(e, t.Elem())
			}
		}
	}
	return v
}

// unknownFields lists the paths (upstream's spelling: a.b[0].c) of object
// keys in v that t has no json field for, sorted.
func unknownFields(v any, t reflect.Type, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	switch val := v.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return nil
		}
		fields := map[string]reflect.Type{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				fields[name] = f.Type
			}
		}
		keys := make([]string, 0, len(val))
		for k := range val {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			ft, ok := fields[k]
			if !ok {
				out = append(out, p)
				continue
			}
			out = append(out, unknownFields(val[k], ft, p)...)
		}
	case []any:
		if t.Kind() != reflect.Slice {
			return nil
		}
		for i, e := range val {
			out = append(out, unknownFields(e, t.Elem(), path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return out
}

// typeMismatches lists the values of v whose JSON type does not fit t, by
// path (jwt[0].issuer.audiences: must be a list, got a number).
func typeMismatches(v any, t reflect.Type, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return nil
	}
	got := jsonKind(v)
	want := ""
	switch t.Kind() {
	case reflect.Struct:
		want = "an object"
		if t == authzDurationType {
			want = "a string"
		}
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "a boolean"
	case reflect.Int, reflect.Int64:
		want = "a number"
	case reflect.Slice:
		want = "a list"
	case reflect.Map:
		want = "an object"
	}
	if want != "" && got != want {
		where := path
		if where == "" {
			where = "the document"
		}
		return []string{fmt.Sprintf("%s: must be %s, got %s", where, want, got)}
	}
	var out []string
	switch val := v.(type) {
	case []any:
		for i, e := range val {
			out = append(out, typeMismatches(e, t.Elem(), path+"["+strconv.Itoa(i)+"]")...)
		}
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return nil
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			e, ok := val[name]
			if !ok {
				continue
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			out = append(out, typeMismatches(e, f.Type, p)...)
		}
	}
	return out
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "null"
}
