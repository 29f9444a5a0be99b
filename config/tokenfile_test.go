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
		wantIs  error
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
			wantErr: `unusable token file: token file '%s' is empty: it needs at least one record token,user,uid[,"group1,group2"]; leave --token-auth-file out to use no static tokens`,
			wantIs:  ErrTokenFileContent,
		},
		{
			name:    "blank lines only",
			content: "\n\n",
			wantErr: `unusable token file: token file '%s' is empty: it needs at least one record token,user,uid[,"group1,group2"]; leave --token-auth-file out to use no static tokens`,
			wantIs:  ErrTokenFileContent,
		},
		{
			name:    "only empty tokens",
			content: ",nobody,0\n,somebody,1\n",
			wantErr: `unusable token file: token file '%s' holds only records with an empty token (2): it needs at least one record token,user,uid[,"group1,group2"]; leave --token-auth-file out to use no static tokens`,
			wantIs:  ErrTokenFileContent,
		},
		{
			name:    "space inside a token names the line",
			content: "t1,bob,2\n\n\"se cret\",alice,3\n",
			wantErr: "unusable token file: token file '%s' line 3: the token holds a space at byte 3: a bearer token cannot hold white space or control characters",
			wantIs:  ErrTokenFileContent,
		},
		{
			name:    "leading space",
			content: "t1,bob,2\n secret,alice,3\n",
			wantErr: "unusable token file: token file '%s' line 2: the token holds a space at byte 1: a bearer token cannot hold white space or control characters",
			wantIs:  ErrTokenFileContent,
		},
		{
			name:    "control byte",
			content: "sec\x01ret,alice,3\n",
			wantErr: "unusable token file: token file '%s' line 1: the token holds the character U+0001 at byte 4: a bearer token cannot hold white space or control characters",
			wantIs:  ErrTokenFileContent,
		},
		{
			name:    "tab",
			content: "t1,bob,2\nsecret\t,alice,3\n",
			wantErr: "unusable token file: token file '%s' line 2: the token holds the character U+0009 at byte 7: a bearer token cannot hold white space or control characters",
			wantIs:  ErrTokenFileContent,
		},
		{
			name:    "DEL",
			content: "secret\x7f,alice,3\n",
			wantErr: "unusable token file: token file '%s' line 1: the token holds the character U+007F at byte 7: a bearer token cannot hold white space or control characters",
			wantIs:  ErrTokenFileContent,
		},
		{
			name:    "two columns",
			content: "t1,bob,2\nt2,carol\n",
			wantErr: "token file '%s' must have at least 3 columns (token, user name, user uid), found 2",
			wantIs:  ErrTokenFileColumns,
		},
		{
			name:    "one column",
			content: "t1\n",
			wantErr: "token file '%s' must have at least 3 columns (token, user name, user uid), found 1",
			wantIs:  ErrTokenFileColumns,
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
				if !errors.Is(err, tt.wantIs) {
					t.Fatalf("error %v does not wrap %v", err, tt.wantIs)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Fatalf("error %q shows the token", err)
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

// FuzzParseTokenFile reads arbitrary token files: no panic, no file is
// accepted without a token, and no record with an empty token or one
// holding white space or control characters (an empty user name is
// accepted, as upstream accepts it).
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
		if len(tokens) == 0 {
			t.Fatalf("accepted a file without tokens: %q", data)
		}
		for _, tok := range tokens {
			if tok.Token == "" || strings.IndexFunc(tok.Token, unusableTokenRune) >= 0 {
				t.Fatalf("accepted an unusable record %+v from %q", tok, data)
			}
		}
	})
}
