package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFeatureGates(t *testing.T) {
	cases := []struct {
		name     string
		values   []string
		on, off  []string
		warnings []string
		wantErr  string
	}{
		{name: "defaults", on: []string{AuthorizeWithSelectors, APIResponseCompression, StructuredAuthorizationConfiguration, WatchList},
			off: []string{CBORServingAndStorage, RemoteRequestHeaderUID, AllowUnsafeMalformedObjectDeletion, KMSv1, "NoSuchGate"}},
		{name: "set and repeat", values: []string{"AuthorizeWithSelectors=false, CBORServingAndStorage=true", "", "APIResponseCompression=False,,WatchList=0"},
			on: []string{CBORServingAndStorage}, off: []string{AuthorizeWithSelectors, APIResponseCompression, WatchList}},
		{name: "later wins", values: []string{"CBORServingAndStorage=true", "CBORServingAndStorage=false"}, off: []string{CBORServingAndStorage}},
		{name: "AllAlpha", values: []string{"RemoteRequestHeaderUID=false,AllAlpha=true"},
			on: []string{CBORServingAndStorage, AllowUnsafeMalformedObjectDeletion, MutatingAdmissionPolicy}, off: []string{RemoteRequestHeaderUID, KMSv1}},
		{name: "AllBeta", values: []string{"AllBeta=false", "WatchList=true"},
			on: []string{WatchList, StructuredAuthorizationConfiguration}, off: []string{AuthorizeWithSelectors, APIResponseCompression}},
		{name: "GA at its default", values: []string{"StructuredAuthorizationConfiguration=true"}, on: []string{StructuredAuthorizationConfiguration},
			warnings: []string{"Setting GA feature gate StructuredAuthorizationConfiguration=true. It will be removed in a future release."}},
		{name: "deprecated", values: []string{"KMSv1=true"}, on: []string{KMSv1},
			warnings: []string{"Setting deprecated feature gate KMSv1=true. It will be removed in a future release."}},
		{name: "unknown", values: []string{"AuthorizeWithSelectors=true,Bogus=true"}, wantErr: "unrecognized feature gate: Bogus"},
		{name: "unknown AllGA", values: []string{"AllGA=true"}, wantErr: "unrecognized feature gate: AllGA"},
		{name: "bad value", values: []string{"WatchList=maybe"}, wantErr: `invalid value of WatchList=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{name: "empty value", values: []string{"WatchList="}, wantErr: `invalid value of WatchList=, err: strconv.ParseBool: parsing "": invalid syntax`},
		{name: "no value", values: []string{"WatchList"}, wantErr: "missing bool value for WatchList"},
		{name: "locked", values: []string{"StructuredAuthorizationConfiguration=false"},
			wantErr: "cannot set feature gate StructuredAuthorizationConfiguration to false, feature is locked to true"},
		{name: "locked not freed by AllBeta", values: []string{"AllBeta=false"}, on: []string{ServiceAccountTokenJTI}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, warnings, err := ParseFeatureGates(c.values)
			if c.wantErr != "" {
				want := ErrInvalid.Error() + ": --feature-gates: " + c.wantErr
				if !errors.Is(err, ErrInvalid) || err.Error() != want {
					t.Fatalf("error %v, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range c.on {
				if !g.Enabled(n) {
					t.Errorf("%s is off", n)
				}
			}
			for _, n := range c.off {
				if g.Enabled(n) {
					t.Errorf("%s is on", n)
				}
			}
			if !slices.Equal(warnings, c.warnings) {
				t.Errorf("warnings %q, want %q", warnings, c.warnings)
			}
		})
	}
}

func TestFeatureGatesString(t *testing.T) {
	g, _, err := ParseFeatureGates([]string{"WatchList=false,CBORServingAndStorage=true,APIResponseCompression=true"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.String(), "CBORServingAndStorage=true,WatchList=false"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestFeatureGatesUsage(t *testing.T) {
	u := FeatureGatesUsage()
	for _, want := range []string{
		"\nAllAlpha=true|false (ALPHA - default=false)\nAllBeta=true|false (BETA - default=false)\n",
		"\nAuthorizeWithSelectors=true|false (BETA - default=true)\n",
		"\nCBORServingAndStorage=true|false (ALPHA - default=false)\n",
	} {
		if !strings.Contains(u, want) {
			t.Errorf("usage lacks %q:\n%s", want, u)
		}
	}
	// Upstream's help leaves out GA and deprecated gates.
	for _, not := range []string{StructuredAuthorizationConfiguration, KMSv1} {
		if strings.Contains(u, not+"=") {
			t.Errorf("usage lists %s", not)
		}
	}
}

// The spec table is self-consistent: a locked gate is GA or deprecated.
func TestKnownFeaturesLocked(t *testing.T) {
	for name, s := range KnownFeatures {
		if s.Locked && s.Stage != GA && s.Stage != Deprecated {
			t.Errorf("%s is locked at stage %q", name, s.Stage)
		}
		if s.Stage == Alpha && s.Default {
			t.Errorf("%s is alpha and on by default", name)
		}
	}
}

func FuzzFeatureGates(f *testing.F) {
	for _, s := range []string{"", "WatchList=true", "AllAlpha=true,AllBeta=false", "KMSv1=false, X", "StructuredAuthorizationConfiguration=false", ",,=,", "WatchList= 1 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, _, err := ParseFeatureGates([]string{s})
		if err != nil {
			if !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), ErrInvalid.Error()+": --feature-gates: ") {
				t.Fatalf("%q: error %v", s, err)
			}
			return
		}
		for name, spec := range KnownFeatures {
			if spec.Locked && g.Enabled(name) != spec.Default {
				t.Fatalf("%q: locked %s changed", s, name)
			}
		}
		// What String spells parses back to the same gates.
		again, _, err := ParseFeatureGates([]string{g.String()})
		if err != nil {
			t.Fatalf("%q: String() %q does not parse: %v", s, g.String(), err)
		}
		for name := range KnownFeatures {
			if again.Enabled(name) != g.Enabled(name) {
				t.Fatalf("%q: %s differs after a round trip through %q", s, name, g.String())
			}
		}
	})
}

// The authentication gates refuse the file, or its anonymous section, with
// upstream's texts.
func TestFeatureGatesAuthenticationConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "authn.yaml")
	b := Brands["plat"]
	body := "apiVersion: " + AuthenticationConfigAPIVersions(b)[0] + "\nkind: AuthenticationConfiguration\nanonymous:\n  enabled: true\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ gates, want string }{
		{"StructuredAuthenticationConfiguration=false", ": set --feature-gates=StructuredAuthenticationConfiguration=true to use authentication-config file"},
		{"AnonymousAuthConfigurableEndpoints=false", ": --authentication-config " + path + ": invalid authentication config: anonymous: Forbidden: anonymous is not supported when AnonymousAuthConfigurableEndpoints feature gate is disabled"},
		{"AnonymousAuthConfigurableEndpoints=true", ""},
	} {
		o := Options{DataDir: dir, BindAddress: "127.0.0.1", AuthorizationModes: []string{ModeAlwaysDeny}, Brand: b, HistoryRetention: time.Minute,
			AuthenticationConfigFile: path, FeatureGatesFlag: []string{c.gates}}
		err := o.Validate()
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.gates, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalid) || err.Error() != ErrInvalid.Error()+c.want {
			t.Errorf("%s: error %v, want %q", c.gates, err, c.want)
		}
	}
}
