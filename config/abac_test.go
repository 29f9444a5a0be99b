package config

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseABAC(t *testing.T) {
	t.Parallel()
	for _, name := range BrandNames() {
		b := Brands[name]
		v1 := `"apiVersion":"` + b.ABACGroup() + `/v1beta1","kind":"Policy"`
		tests := []struct {
			name        string
			in          string
			want        []ABACPolicy
			unversioned int
			wantErr     string
		}{
			{name: "empty file", in: "", want: []ABACPolicy{}},
			{name: "blank and comment lines", in: "\n   \n# a comment\n  # indented\n", want: []ABACPolicy{}},
			{
				name: "v1beta1 every field",
				in:   `{` + v1 + `,"spec":{"user":"alice","group":"dev","readonly":true,"apiGroup":"apps","resource":"deployments","namespace":"ns1","nonResourcePath":"/healthz"}}`,
				want: []ABACPolicy{{User: "alice", Group: "dev", Readonly: true, APIGroup: "apps", Resource: "deployments", Namespace: "ns1", NonResourcePath: "/healthz"}},
			},
			{
				name: "v1beta1 star user is every authenticated user",
				in:   `{` + v1 + `,"spec":{"user":"*","namespace":"*","resource":"*","apiGroup":"*"}}`,
				want: []ABACPolicy{{Group: "system:authenticated", Namespace: "*", Resource: "*", APIGroup: "*"}},
			},
			{
				name: "v1beta1 star group replaces the user too",
				in:   `{` + v1 + `,"spec":{"user":"bob","group":"*","nonResourcePath":"*"}}`,
				want: []ABACPolicy{{Group: "system:authenticated", NonResourcePath: "*"}},
			},
			{
				name: "v1beta1 keeps empty fields empty",
				in:   `{` + v1 + `,"spec":{"user":"alice"}}`,
				want: []ABACPolicy{{User: "alice"}},
			},
			{name: "v1beta1 without spec", in: `{` + v1 + `}`, want: []ABACPolicy{{}}},
			{
				name: "v1beta1 keys are case-sensitive and unknown keys ignored",
				in:   `{` + v1 + `,"spec":{"User":"x","user":"alice","extra":1}}`,
				want: []ABACPolicy{{User: "alice"}},
			},
			{
				name: "v1beta1 last duplicate wins",
				in:   `{` + v1 + `,"spec":{"user":"a","user":"b"}}`,
				want: []ABACPolicy{{User: "b"}},
			},
			{
				name:        "v0 without subject, namespace and resource",
				in:          `{"readonly":true}`,
				want:        []ABACPolicy{{Group: "system:authenticated", Readonly: true, Namespace: "*", Resource: "*", APIGroup: "*", NonResourcePath: "*"}},
				unversioned: 1,
			},
			{
				name:        "v0 user with resource",
				in:          `{"user":"alice","resource":"pods"}`,
				want:        []ABACPolicy{{User: "alice", Namespace: "*", Resource: "pods", APIGroup: "*"}},
				unversioned: 1,
			},
			{
				name:        "v0 star user",
				in:          `{"user":"*","namespace":"ns1"}`,
				want:        []ABACPolicy{{Group: "system:authenticated", Namespace: "ns1", Resource: "*", APIGroup: "*"}},
				unversioned: 1,
			},
			{
				name:        "v0 ignores versioned-only fields",
				in:          `{"group":"dev","apiGroup":"apps","nonResourcePath":"/x","namespace":"n","resource":"r"}`,
				want:        []ABACPolicy{{Group: "dev", Namespace: "n", Resource: "r", APIGroup: "*"}},
				unversioned: 1,
			},
			{
				name: "explicit v0 is versioned",
				in:   `{"apiVersion":"` + b.ABACGroup() + `/v0","kind":"Policy","user":"alice"}`,
				want: []ABACPolicy{{User: "alice", Namespace: "*", Resource: "*", APIGroup: "*", NonResourcePath: "*"}},
			},
			{
				name: "lines in order",
				in:   "# header\n{" + v1 + `,"spec":{"user":"a"}}` + "\n\n" + `{"user":"b","resource":"pods"}` + "\n",
				want: []ABACPolicy{
					{User: "a"},
					{User: "b", Namespace: "*", Resource: "pods", APIGroup: "*"},
				},
				unversioned: 1,
			},
			{name: "syntax error names the line", in: "# c\n\n{" + v1 + `,"spec":{"user":"a"}}` + "\n{nope\n", wantErr: `error reading policy file p.jsonl, line 4: {nope: invalid character 'n'`},
			{name: "not an object", in: `[1]`, wantErr: `line 1: [1]: json: cannot unmarshal array`},
			{name: "null line", in: `null`, wantErr: `line 1: null: expected a JSON object, got null`},
			{name: "wrong field type", in: `{` + v1 + `,"spec":{"user":5}}`, wantErr: `line 1: {` + v1 + `,"spec":{"user":5}}: spec.user: expected a string, got 5`},
			{name: "wrong readonly type", in: `{"readonly":"yes"}`, wantErr: `readonly: expected a boolean, got "yes"`},
			{name: "spec not an object", in: `{` + v1 + `,"spec":"x"}`, wantErr: `spec: json: cannot unmarshal string`},
			{name: "unknown version", in: `{"apiVersion":"` + b.ABACGroup() + `/v9","kind":"Policy"}`, wantErr: `no kind "Policy" is registered for version "` + b.ABACGroup() + `/v9"`},
			{name: "unknown kind", in: `{` + strings.Replace(v1, "Policy", "Rule", 1) + `}`, wantErr: `no kind "Rule" is registered for version "` + b.ABACGroup() + `/v1beta1"`},
			{name: "apiVersion not a string", in: `{"apiVersion":1}`, wantErr: `apiVersion: expected a string, got 1`},
		}
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				got, unversioned, err := parseABAC(strings.NewReader(tt.in), "p.jsonl", b)
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrABACPolicy) {
						t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tt.want) || unversioned != tt.unversioned {
					t.Fatalf("got %+v (%d unversioned), want %+v (%d)", got, unversioned, tt.want, tt.unversioned)
				}
			})
		}
	}
}

func TestParseABACPolicyFile(t *testing.T) {
	t.Parallel()
	b := Brands["plat"]
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.jsonl")
	if err := os.WriteFile(path, []byte(`{"user":"alice"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	p, err := ParseABACPolicyFile(path, b, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil || len(p) != 1 {
		t.Fatalf("%v %+v", err, p)
	}
	if !strings.Contains(logs.String(), "unversioned") || !strings.Contains(logs.String(), path) {
		t.Errorf("no warning for an unversioned line: %q", logs.String())
	}
	if _, err := ParseABACPolicyFile(filepath.Join(dir, "missing"), b, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestABACOptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(good, []byte(`{"apiVersion":"`+Brands["plat"].ABACGroup()+`/v1beta1","kind":"Policy","spec":{"user":"alice","readonly":true}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("\n{\"user\":\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		modes   []string
		file    string
		wantErr string
		want    []ABACPolicy
	}{
		{name: "ABAC needs the file", modes: []string{ModeABAC}, wantErr: "authorization-mode ABAC's authorization policy file not passed"},
		{name: "file needs ABAC", modes: []string{ModeAlwaysDeny}, file: good, wantErr: "cannot specify --authorization-policy-file without mode ABAC"},
		{name: "file is read", modes: []string{ModeABAC}, file: good, want: []ABACPolicy{{User: "alice", Readonly: true}}},
		{name: "malformed file", modes: []string{ModeABAC}, file: bad, wantErr: "--authorization-policy-file: error reading policy file " + bad + ", line 2: {\"user\":: unexpected end of JSON input"},
		{name: "missing file", modes: []string{ModeABAC}, file: filepath.Join(dir, "none"), wantErr: "--authorization-policy-file: open "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := Options{DataDir: dir, BindAddress: "127.0.0.1", AuthorizationModes: tt.modes, AuthorizationPolicyFile: tt.file,
				Brand: Brands["plat"], HistoryRetention: DefaultHistoryRetention}
			err := o.Validate()
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(o.ABACPolicies, tt.want) {
				t.Fatalf("policies %+v, want %+v", o.ABACPolicies, tt.want)
			}
		})
	}
}

func FuzzABAC(f *testing.F) {
	b := Brands["plat"]
	for _, s := range []string{
		"", "# c\n\n", `{"user":"a"}`, `{"apiVersion":"` + b.ABACGroup() + `/v1beta1","kind":"Policy","spec":{"user":"*","readonly":true}}`,
		`{"apiVersion":"x/v1","kind":"Policy"}`, "{\"spec\":null}\n[1]\n", `{"user":"\u00e9","group":null}`, "\xff\n{",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		got, unversioned, err := parseABAC(strings.NewReader(data), "f", b)
		if err != nil {
			if !errors.Is(err, ErrABACPolicy) {
				t.Fatalf("error %v does not wrap ErrABACPolicy", err)
			}
			return
		}
		if unversioned > len(got) {
			t.Fatalf("%d unversioned of %d lines", unversioned, len(got))
		}
		for _, p := range got {
			if p.User == "*" || p.Group == "*" {
				t.Fatalf("a star subject survived conversion: %+v from %q", p, data)
			}
		}
	})
}
