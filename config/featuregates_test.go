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
	const (
		structuredAuthz = "StructuredAuthorizationConfiguration" // GA, locked on
		kmsV1           = "KMSv1"                                // deprecated, off
		remoteUID       = "RemoteRequestHeaderUID"               // alpha
	)
	cases := []struct {
		name     string
		values   []string
		on, off  []string
		warnings []string
		wantErr  string
	}{
		{name: "defaults", on: []string{AuthorizeWithSelectors, APIResponseCompression, structuredAuthz, WatchList, "WindowsHostNetwork", "SchedulerQueueingHints"},
			off: []string{CBORServingAndStorage, remoteUID, AllowUnsafeMalformedObjectDeletion, kmsV1, "DynamicResourceAllocation", "ServiceAccountNodeAudienceRestriction", "NoSuchGate"}},
		{name: "set and repeat", values: []string{"AuthorizeWithSelectors=false, CBORServingAndStorage=true", "", "APIResponseCompression=False,,WatchList=0"},
			on: []string{CBORServingAndStorage}, off: []string{AuthorizeWithSelectors, APIResponseCompression, WatchList}},
		{name: "later wins", values: []string{"CBORServingAndStorage=true", "CBORServingAndStorage=false"}, off: []string{CBORServingAndStorage}},
		// Gates platd has no behaviour for are accepted, whichever
		// component of upstream's they serve.
		{name: "gates of other components", values: []string{"DynamicResourceAllocation=true,InPlacePodVerticalScaling=true,SidecarContainers=false",
			"ContextualLogging=false,WatchListClient=true,ComponentFlagz=true,CustomResourceFieldSelectors=true"},
			on:       []string{"DynamicResourceAllocation", "InPlacePodVerticalScaling", "WatchListClient", "ComponentFlagz", "CustomResourceFieldSelectors"},
			off:      []string{"SidecarContainers", "ContextualLogging"},
			warnings: []string{"Setting GA feature gate CustomResourceFieldSelectors=true. It will be removed in a future release."}},
		{name: "AllAlpha", values: []string{"RemoteRequestHeaderUID=false,AllAlpha=true"},
			on: []string{CBORServingAndStorage, AllowUnsafeMalformedObjectDeletion, "MutatingAdmissionPolicy", "PodLevelResources", "LoggingAlphaOptions"}, off: []string{remoteUID, kmsV1, "DynamicResourceAllocation"}},
		{name: "AllBeta", values: []string{"AllBeta=false", "WatchList=true"},
			on: []string{WatchList, structuredAuthz}, off: []string{AuthorizeWithSelectors, APIResponseCompression, "NodeSwap"}},
		{name: "GA at its default", values: []string{"StructuredAuthorizationConfiguration=true"}, on: []string{structuredAuthz},
			warnings: []string{"Setting GA feature gate StructuredAuthorizationConfiguration=true. It will be removed in a future release."}},
		{name: "unlocked GA set off", values: []string{"ExecProbeTimeout=false"}, off: []string{"ExecProbeTimeout"},
			warnings: []string{"Setting GA feature gate ExecProbeTimeout=false. It will be removed in a future release."}},
		{name: "deprecated", values: []string{"KMSv1=true,DisableNodeKubeProxyVersion=true"}, on: []string{kmsV1, "DisableNodeKubeProxyVersion"},
			warnings: []string{"Setting deprecated feature gate KMSv1=true. It will be removed in a future release.",
				"Setting deprecated feature gate DisableNodeKubeProxyVersion=true. It will be removed in a future release."}},
		{name: "unknown", values: []string{"AuthorizeWithSelectors=true,Bogus=true"}, wantErr: "unrecognized feature gate: Bogus"},
		{name: "unknown AllGA", values: []string{"AllGA=true"}, wantErr: "unrecognized feature gate: AllGA"},
		{name: "removed before v1.32", values: []string{"PodHostIPs=true"}, wantErr: "unrecognized feature gate: PodHostIPs"},
		{name: "names are case-sensitive", values: []string{"watchlist=true"}, wantErr: "unrecognized feature gate: watchlist"},
		{name: "bad value", values: []string{"WatchList=maybe"}, wantErr: `invalid value of WatchList=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{name: "empty value", values: []string{"WatchList="}, wantErr: `invalid value of WatchList=, err: strconv.ParseBool: parsing "": invalid syntax`},
		{name: "no value", values: []string{"WatchList"}, wantErr: "missing bool value for WatchList"},
		{name: "locked", values: []string{"StructuredAuthorizationConfiguration=false"},
			wantErr: "cannot set feature gate StructuredAuthorizationConfiguration to false, feature is locked to true"},
		{name: "locked GA of another component", values: []string{"PodIndexLabel=false"},
			wantErr: "cannot set feature gate PodIndexLabel to false, feature is locked to true"},
		{name: "locked deprecated", values: []string{"AllowServiceLBStatusOnNonLB=true"},
			wantErr: "cannot set feature gate AllowServiceLBStatusOnNonLB to true, feature is locked to false"},
		{name: "locked not freed by AllBeta", values: []string{"AllBeta=false"}, on: []string{"ServiceAccountTokenJTI"}},
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
		"\nDynamicResourceAllocation=true|false (BETA - default=false)\n",
		"\nWindowsHostNetwork=true|false (ALPHA - default=true)",
		"\nWatchListClient=true|false (BETA - default=false)\n",
	} {
		if !strings.Contains(u, want) {
			t.Errorf("usage lacks %q:\n%s", want, u)
		}
	}
	// Upstream sorts the lines as strings.
	lines := strings.Split(u, "\n")[1:]
	if !slices.IsSorted(lines) {
		t.Errorf("usage lines are not sorted:\n%s", u)
	}
	// Upstream's help leaves out GA and deprecated gates.
	for _, not := range []string{"StructuredAuthorizationConfiguration", "KMSv1", "PodIndexLabel", "ExecProbeTimeout"} {
		if strings.Contains(u, not+"=") {
			t.Errorf("usage lists %s", not)
		}
	}
}

// The table is sorted and unique (LookupFeature binary-searches it) and
// self-consistent: a locked gate is GA or deprecated, and only upstream's
// one odd alpha gate is on by default.
func TestFeatureTable(t *testing.T) {
	for i := 1; i < len(featureTable); i++ {
		if featureTable[i-1].Name >= featureTable[i].Name {
			t.Errorf("%s is not before %s", featureTable[i-1].Name, featureTable[i].Name)
		}
	}
	for name, s := range KnownFeatures() {
		if got, ok := LookupFeature(name); !ok || got != s {
			t.Errorf("LookupFeature(%s) = %v %v, want %v", name, got, ok, s)
		}
		if s.Locked && s.Stage != GA && s.Stage != Deprecated {
			t.Errorf("%s is locked at stage %q", name, s.Stage)
		}
		if s.Stage == Alpha && s.Default && name != "WindowsHostNetwork" {
			t.Errorf("%s is alpha and on by default", name)
		}
	}
	for _, name := range []string{AllAlpha, AllBeta, "", "watchlist", "ZZZ"} {
		if _, ok := LookupFeature(name); ok {
			t.Errorf("LookupFeature(%q) found", name)
		}
	}
}

func FuzzFeatureGates(f *testing.F) {
	for _, s := range []string{"", "WatchList=true", "AllAlpha=true,AllBeta=false", "KMSv1=false, X", "StructuredAuthorizationConfiguration=false", "AllAlpha=true,PodLevelResources=false", ",,=,", "WatchList= 1 "} {
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
		for name, spec := range KnownFeatures() {
			if spec.Locked && g.Enabled(name) != spec.Default {
				t.Fatalf("%q: locked %s changed", s, name)
			}
		}
		// What String spells parses back to the same gates.
		again, _, err := ParseFeatureGates([]string{g.String()})
		if err != nil {
			t.Fatalf("%q: String() %q does not parse: %v", s, g.String(), err)
		}
		for name := range KnownFeatures() {
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
