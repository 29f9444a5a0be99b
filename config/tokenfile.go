package config

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrTokenFileColumns is wrapped by the error ParseTokenFile returns when a
// record has fewer than the three required columns.
var ErrTokenFileColumns = errors.New("token file record has too few columns")

// ErrTokenFileContent is wrapped by the error ParseTokenFile returns for a
// file that holds no token, or a token no Authorization header can carry.
var ErrTokenFileContent = errors.New("unusable token file")

// minTokenColumns is the number of columns every record must have: the token,
// the user name and the user uid. The group list is optional.
const minTokenColumns = 3

// Token is one entry of the static token file: a bearer token and the user
// it authenticates as.
type Token struct {
	Token  string
	User   string
	UID    string
	Groups []string
}

// columnsError carries the upstream wording of the too-few-columns error.
type columnsError struct {
	path  string
	found int
}

func (e *columnsError) Error() string {
	return fmt.Sprintf("token file '%s' must have at least 3 columns (token, user name, user uid), found %d", e.path, e.found)
}

func (e *columnsError) Unwrap() error { return ErrTokenFileColumns }

// ParseTokenFile reads a static token file: CSV records of the form
// token,user,uid[,"group1,group2"]. The record count per line may vary; the
// fourth column is split on "," into groups and columns past the fourth are
// ignored. Records with an empty token are skipped with a warning naming
// the line, as upstream; when a token appears twice the later record
// replaces the earlier one in place, so the result holds each token exactly
// once. A record with fewer than three columns fails the whole file with an
// error wrapping ErrTokenFileColumns. Stricter than upstream, which
// accepts both silently: a file without any token, and a token holding
// white space or a control character, fail with an error wrapping
// ErrTokenFileContent that names the file and line. Such a token is a
// mistake or a trap: a space or most control bytes can never arrive in a
// bearer header (the header splits on the space; HTTP refuses the
// controls), and the rest (a tab, Unicode spaces) arrive only from clients
// and proxies that keep them, which many do not.
func ParseTokenFile(path string) ([]Token, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseTokens(f, path)
}

func parseTokens(r io.Reader, path string) ([]Token, error) {
	reader := csv.NewReader(r)
	reader.FieldsPerRecord = -1
	var out []Token
	index := map[string]int{}
	skipped := 0
	for {
		record, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("token file '%s': %w", path, err)
		}
		if len(record) < minTokenColumns {
			return nil, &columnsError{path: path, found: len(record)}
		}
		line, _ := reader.FieldPos(0)
		tok := Token{Token: record[0], User: record[1], UID: record[2]}
		if tok.Token == "" {
			slog.Warn("token file: empty token skipped", "path", path, "line", line)
			skipped++
			continue
		}
		if i := strings.IndexFunc(tok.Token, unusableTokenRune); i >= 0 {
			return nil, fmt.Errorf("%w: token file '%s' line %d: the token holds %s at byte %d: a bearer token cannot hold white space or control characters", ErrTokenFileContent, path, line, describeRune(tok.Token, i), i+1)
		}
		if len(record) > minTokenColumns {
			tok.Groups = strings.Split(record[3], ",")
		}
		if i, dup := index[tok.Token]; dup {
			slog.Warn("token file: duplicate token, later record wins", "path", path, "line", line, "user", tok.User)
			out[i] = tok
			continue
		}
		index[tok.Token] = len(out)
		out = append(out, tok)
	}
	if len(out) == 0 {
		what := "is empty"
		if skipped > 0 {
			what = fmt.Sprintf("holds only records with an empty token (%d)", skipped)
		}
		return nil, fmt.Errorf("%w: token file '%s' %s: it needs at least one record token,user,uid[,\"group1,group2\"]; leave --token-auth-file out to use no static tokens", ErrTokenFileContent, path, what)
	}
	return out, nil
}

// unusableTokenRune reports runes a bearer token in a token file may not
// hold: white space and control characters (see ParseTokenFile).
func unusableTokenRune(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

// describeRune names the rune at byte i of s without echoing the token.
func describeRune(s string, i int) string {
	r, _ := utf8.DecodeRuneInString(s[i:])
	if r == ' ' {
		return "a space"
	}
	return fmt.Sprintf("the character %U", r)
}
