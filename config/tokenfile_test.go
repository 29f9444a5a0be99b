package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseTokenFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    []Token
		wantErr string
	}{
		{
			name:    "upstream example",
			content: "31ada4fd-adec-460c-809a-9e56ceb75269,admin,admin-uid,\"system:masters\"\ns3cr3t,alice,1001,\"dev,qa\"\n",
			want: []Token{
				{Token: "31ada4fd-adec-460c-809a-9e56ceb75269", User: "admin", UID: "admin-uid", Groups: []string{"system:masters"}},
				{Token: "s3cr3t", User: "alice", UID: "1001", Groups: []string{"dev", "qa"}},
			},
		},
		{
			name:    "three columns have no groups",
			content: "t1,bob,2\n",
			want:    []Token{{Token: "t1", User: "bob", UID: "2"}},
		},
		{
			name:    "empty fourth column is one empty group",
			content: "t1,bob,2,\n",
			want:    []Token{{Token: "t1", User: "bob", UID: "2", Groups: []string{""}}},
		},
		{
			name:    "groups are not trimmed and extra columns are ignored",
			content: "t1,bob,2,\"a, b\",ignored,more\n",
			want:    []Token{{Token: "t1", User: "bob", UID: "2", Groups: []string{"a", " b"}}},
		},
		{
			name:    "variable field count across records",
			content: "t1,bob,2\nt2,carol,3,g\n",
			want: []Token{
				{Token: "t1", User: "bob", UID: "2"},
				{Token: "t2", User: "carol", UID: "3", Groups: []string{"g"}},
			},
		},
		{
			name:    "quoted field with escaped quote",
			content: "\"t\"\"1\",bob,2\n",
			want:    []Token{{Token: "t\"1", User: "bob", UID: "2"}},
		},
		{
			name:    "empty token is skipped",
			content: ",nobody,0\nt1,bob,2\n",
			want:    []Token{{Token: "t1", User: "bob", UID: "2"}},
		},
		{
			name:    "duplicate token last wins in place",
			content: "t1,bob,2\nt2,carol,3\nt1,dave,4,admins\n",
			want: []Token{
				{Token: "t1", User: "dave", UID: "4", Groups: []string{"admins"}},
				{Token: "t2", User: "carol", UID: "3"},
			},
		},
		{
			name:    "blank lines are skipped",
			content: "\nt1,bob,2\n\n",
			want:    []Token{{Token: "t1", User: "bob", UID: "2"}},
		},
		{
			name:    "empty file",
			content: "",
			want:    nil,
		},
		{
			name:    "two columns",
			content: "t1,bob,2\nt2,carol\n",
			wantErr: "token file '%s' must have at least 3 columns (token, user name, user uid), found 2",
		},
		{
			name:    "one column",
			content: "t1\n",
			wantErr: "token file '%s' must have at least 3 columns (token, user name, user uid), found 1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "tokens.csv")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ParseTokenFile(path)
			if tt.wantErr != "" {
				want := fmt.Sprintf(tt.wantErr, path)
				if err == nil || err.Error() != want {
					t.Fatalf("error = %v, want %q", err, want)
				}
				if !errors.Is(err, ErrTokenFileColumns) {
					t.Fatalf("error %v does not wrap ErrTokenFileColumns", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTokenFile: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParseTokenFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := ParseTokenFile(filepath.Join(dir, "missing.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: error = %v, want os.ErrNotExist", err)
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("t1,\"bob,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseTokenFile(bad); err == nil {
		t.Fatal("unterminated quote: want an error")
	}
}

// FuzzParseTokenFile reads arbitrary token files: no panic, and no record
// is accepted without a token (an empty user name is accepted, as
// upstream accepts it).
func FuzzParseTokenFile(f *testing.F) {
	for _, s := range []string{
		"tok,alice,1\n", `tok,bob,2,"a,b"` + "\n", "\ufefftok,u,3\n", "a,b\n", `x,"unterminated`, "tok,alice,1\ntok,bob,2\n", ",,,\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		tokens, err := parseTokens(strings.NewReader(data), "tokens.csv")
		if err != nil {
			return
		}
		for _, tok := range tokens {
			if tok.Token == "" {
				t.Fatalf("accepted an incomplete record %+v from %q", tok, data)
			}
		}
	})
}
