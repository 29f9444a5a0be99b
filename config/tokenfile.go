package config

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// ErrTokenFileColumns is wrapped by the error ParseTokenFile returns when a
// record has fewer than the three required columns.
var ErrTokenFileColumns = errors.New("token file record has too few columns")

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
// ignored. Records with an empty token are skipped; when a token appears
// twice the later record replaces the earlier one in place, so the result
// holds each token exactly once. A record with fewer than three columns fails
// the whole file with an error wrapping ErrTokenFileColumns.
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
	for line := 1; ; line++ {
		record, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("token file '%s': %w", path, err)
		}
		if len(record) < minTokenColumns {
			return nil, &columnsError{path: path, found: len(record)}
		}
		tok := Token{Token: record[0], User: record[1], UID: record[2]}
		if tok.Token == "" {
			slog.Warn("token file: empty token skipped", "path", path, "record", line)
			continue
		}
		if len(record) > minTokenColumns {
			tok.Groups = strings.Split(record[3], ",")
		}
		if i, dup := index[tok.Token]; dup {
			slog.Warn("token file: duplicate token, later record wins", "path", path, "record", line, "user", tok.User)
			out[i] = tok
			continue
		}
		index[tok.Token] = len(out)
		out = append(out, tok)
	}
}
