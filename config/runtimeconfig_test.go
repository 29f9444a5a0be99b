package config

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRuntimeConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		values []string
		want   string // String() of the result
	}{
		{"nothing", nil, ""},
		{"empty entries", []string{"", " , ,"}, ""},
		{"group-version off", []string{"apps/v1=false"}, "apps/v1=false"},
		{"no value means true", []string{"apps/v1"}, "apps/v1=true"},
		{"empty value means true", []string{"apps/v1="}, "apps/v1=true"},
		{"boolean spellings", []string{"a/v1=1,b/v1=t,c/v1=TRUE,d/v1=0,e/v1=F,f/v1=False"}, "a/v1=true,b/v1=true,c/v1=true,d/v1=false,e/v1=false,f/v1=false"},
		{"spaces trimmed", []string{" apps/v1 = false "}, "apps/v1=false"},
		{"resource", []string{"apps/v1/deployments=false"}, "apps/v1/deployments=false"},
		{"later entry wins", []string{"apps/v1=false,apps/v1=true"}, "apps/v1=true"},
		{"later flag wins", []string{"apps/v1=false", "apps/v1"}, "apps/v1=true"},
		{"position of first appearance", []string{"batch/v1=false,apps/v1=false", "batch/v1=true"}, "batch/v1=true,apps/v1=false"},
		{"levels in their fixed order", []string{"api/alpha=true,api/beta=false,api/ga=true,api/all=false"}, "api/all=false,api/ga=true,api/beta=false,api/alpha=true"},
		{"levels before versions before resources", []string{"apps/v1/deployments=false,apps/v1=true,api/all=false"}, "api/all=false,apps/v1=true,apps/v1/deployments=false"},
		{"api/all=false with another key", []string{"api/all=false,apps/v1=true"}, "api/all=false,apps/v1=true"},

		// The core group: v1 and api/v1 and everything below them fold
		// into the whole group-version; /v1/<resource> names a resource.
		{"core v1", []string{"v1=false"}, "/v1=false"},
		{"core api/v1", []string{"api/v1=false"}, "/v1=false"},
		{"core /v1", []string{"/v1=false"}, "/v1=false"},
		{"core v1/pods is all of v1", []string{"v1/pods=false"}, "/v1=false"},
		{"core api/v1/pods is all of v1", []string{"api/v1/pods=false"}, "/v1=false"},
		{"core resource", []string{"/v1/pods=false"}, "/v1/pods=false"},
		{"core spellings are one key", []string{"v1=false,api/v1=true"}, "/v1=true"},
		{"api/v1beta3 is a group named api", []string{"api/v1beta3=false"}, "api/v1beta3=false"},
		{"three parts under api", []string{"api/all/pods=false"}, "api/all/pods=false"},

		// api/legacy is dropped whatever its value.
		{"api/legacy", []string{"api/legacy=false,apps/v1=false"}, "apps/v1=false"},
		{"api/legacy any value", []string{"api/legacy=maybe"}, ""},
	}
	for _, c := range cases {
		rc, err := ParseRuntimeConfig(c.values)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := rc.String(); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestParseRuntimeConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		values []string
		want   []string // substrings of the message, in order
	}{
		{[]string{"api/all=false"}, []string{"invalid key with only api/all=false"}},
		{[]string{"api/all=false,api/legacy=false"}, []string{"invalid key with only api/all=false"}},
		{[]string{"api/all=false", "api/all=false"}, []string{"invalid key with only api/all=false"}},
		{[]string{"api/all=maybe"}, []string{"invalid value api/all=maybe", "take exactly true or false"}},
		{[]string{"api/all"}, []string{"invalid value api/all= ", `entry "api/all"`}},
		{[]string{"api/ga=True"}, []string{"invalid value api/ga=True"}},
		{[]string{"apps/v1=maybe"}, []string{`invalid value of apps/v1: maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax`, `entry "apps/v1=maybe"`, "values are true or false"}},
		{[]string{"api/v1=no"}, []string{"invalid value of /v1: no", `entry "api/v1=no"`}},
		{[]string{"apps"}, []string{"runtime-config invalid key apps", "keys are <group>/<version>"}},
		{[]string{"v1beta1=true"}, []string{"runtime-config invalid key v1beta1"}},
		{[]string{"apps/v1/deployments/scale=false"}, []string{"runtime-config invalid key apps/v1/deployments/scale"}},
		{[]string{"=true"}, []string{`runtime-config invalid key  (entry "=true"`}},
		{[]string{"apps/v1/Deployments=false"}, []string{`invalid key apps/v1/Deployments: group/version/resource and resource is always lowercase plural, not "Deployments"`}},
		{[]string{"apps,batch/v1=x"}, []string{"runtime-config invalid key apps", "; ", "invalid value of batch/v1: x"}},
	}
	for _, c := range cases {
		_, err := ParseRuntimeConfig(c.values)
		if err == nil {
			t.Errorf("%q: no error", c.values)
			continue
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v does not wrap ErrInvalid", c.values, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, ErrInvalid.Error()+": --runtime-config: ") {
			t.Errorf("%q: message %q lacks the flag name", c.values, msg)
		}
		rest := msg
		for _, w := range c.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%q: message %q lacks %q", c.values, msg, w)
				break
			}
			rest = rest[i+len(w):]
		}
	}
}

func TestValidateRuntimeConfig(t *testing.T) {
	t.Parallel()
	o := validOptions()
	o.RuntimeConfig = []string{"apps/v1=false", "api/beta=true"}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := o.APIEnablement.String(); got != "api/beta=true,apps/v1=false" {
		t.Errorf("APIEnablement %q", got)
	}
	o = validOptions()
	o.RuntimeConfig = []string{"apps/v1=maybe"}
	if err := o.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "--runtime-config: invalid value of apps/v1: maybe") {
		t.Errorf("bad value: %v", err)
	}
}

func validOptions() Options {
	return Options{DataDir: "d", BindAddress: "127.0.0.1", AuthorizationModes: []string{ModeAlwaysAllow}, HistoryRetention: DefaultHistoryRetention}
}

// fuzzKnown is a small registry for the fuzzer to resolve against.
var fuzzKnown = []KnownResource{
	{GroupVersionResource{"", "v1", "pods"}, true},
	{GroupVersionResource{"apps", "v1", "deployments"}, true},
	{GroupVersionResource{"storage", "v1beta1", "csistoragecapacities"}, false},
}

func FuzzParseRuntimeConfig(f *testing.F) {
	for _, s := range []string{
		"", "apps/v1=false", "api/all=false,apps/v1=true", "api/all=false", "v1/pods=false", "/v1/pods",
		"api/legacy=x", "apps/v1/Deployments", "a/b/c/d", "=", ",,=,", "api/beta= true ,api/alpha=false",
		"apps/v1=maybe", "//", "api/v1beta3=0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		values := strings.Split(s, "\n")
		rc, err := ParseRuntimeConfig(values)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		again, err := ParseRuntimeConfig([]string{rc.String()})
		if err != nil || again.String() != rc.String() {
			t.Fatalf("%q: rendered as %q, parsed back to %q, %v", s, rc.String(), again.String(), err)
		}
		e, err := rc.Resolve(fuzzKnown)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: resolve error %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		for r := range e.resources {
			if !e.GroupVersion(r.Group, r.Version) {
				t.Fatalf("%q: %v served without its group-version", s, r)
			}
		}
	})
}
