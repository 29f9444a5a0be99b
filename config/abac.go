package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
)

// ABACPolicy is one line of an ABAC policy file, in its versioned
// (v1beta1) meaning: the legacy unversioned form is converted on reading.
// "*" in a field matches everything; NonResourcePath may end in "*" to
// match a prefix.
type ABACPolicy struct {
	User, Group     string
	Readonly        bool
	APIGroup        string
	Resource        string
	Namespace       string
	NonResourcePath string
}

// abacAllAuthenticated is the group a "*" subject (and a v0 line without
// subject) stands for: anonymous requests stay excluded.
const abacAllAuthenticated = "system:authenticated"

// abacKind is the kind of every versioned policy line.
const abacKind = "Policy"

// ErrABACPolicy is wrapped by every error ParseABACPolicyFile returns for a
// line it cannot read.
var ErrABACPolicy = errors.New("invalid ABAC policy")

// abacLineError names the file and line a policy could not be read from,
// with the line itself, as upstream prints it.
type abacLineError struct {
	path string
	line int
	data string
	err  error
}

func (e *abacLineError) Error() string {
	return fmt.Sprintf("error reading policy file %s, line %d: %s: %v", e.path, e.line, e.data, e.err)
}

func (e *abacLineError) Unwrap() []error { return []error{ErrABACPolicy, e.err} }

// ParseABACPolicyFile reads --authorization-policy-file: one JSON object
// per line, blank lines and lines starting with "#" skipped. A line with
// apiVersion <ABACGroup>/v1beta1 and kind Policy holds its rule in spec; a
// line without apiVersion and kind is the legacy unversioned form (a flat
// object), converted as upstream converts it, and a warning is logged once
// for the file. log may be nil.
func ParseABACPolicyFile(path string, b Brand, log *slog.Logger) ([]ABACPolicy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	policies, unversioned, err := parseABAC(f, path, b)
	if err != nil {
		return nil, err
	}
	if unversioned > 0 && log != nil {
		log.Warn("policy file contains unversioned rules; see the ABAC documentation for the versioned format", "file", path, "lines", unversioned)
	}
	return policies, nil
}

// maxABACLine bounds one policy line; a longer line is an error, not a
// silent truncation.
const maxABACLine = 1 << 20

func parseABAC(r io.Reader, path string, b Brand) (policies []ABACPolicy, unversioned int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxABACLine)
	policies = []ABACPolicy{}
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 || trimmed[0] == '#' {
			continue
		}
		p, legacy, err := decodeABACLine(trimmed, b)
		if err != nil {
			return nil, 0, &abacLineError{path: path, line: n, data: string(line), err: err}
		}
		if legacy {
			unversioned++
		}
		policies = append(policies, p)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("%w: error reading policy file %s: %w", ErrABACPolicy, path, err)
	}
	return policies, unversioned, nil
}

// abacFields are a policy's fields as the line spells them. Keys match
// case-sensitively, unknown keys are ignored and a repeated key's last
// value wins, as upstream's decoder does.
type abacFields map[string]json.RawMessage

func (f abacFields) str(key string) (string, error) {
	raw, ok := f[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s: expected a string, got %s", key, raw)
	}
	return s, nil
}

func (f abacFields) boolean(key string) (bool, error) {
	raw, ok := f[key]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	var v bool
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, fmt.Errorf("%s: expected a boolean, got %s", key, raw)
	}
	return v, nil
}

func decodeFields(data []byte) (abacFields, error) {
	var f abacFields
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	if f == nil {
		return nil, errors.New("expected a JSON object, got null")
	}
	return f, nil
}

// decodeABACLine decodes one policy; legacy says it was unversioned.
func decodeABACLine(line []byte, b Brand) (p ABACPolicy, legacy bool, err error) {
	top, err := decodeFields(line)
	if err != nil {
		return ABACPolicy{}, false, err
	}
	apiVersion, err := top.str("apiVersion")
	if err != nil {
		return ABACPolicy{}, false, err
	}
	kind, err := top.str("kind")
	if err != nil {
		return ABACPolicy{}, false, err
	}
	v1beta1, v0 := b.ABACGroup()+"/v1beta1", b.ABACGroup()+"/v0"
	switch {
	case apiVersion == "":
		// No version: the legacy flat form, whatever the kind says.
		p, err = decodeABACv0(top)
		return p, true, err
	case kind != "" && kind != abacKind:
		return ABACPolicy{}, false, fmt.Errorf("no kind %q is registered for version %q", kind, apiVersion)
	case apiVersion == v1beta1:
		p, err = decodeABACv1beta1(top)
		return p, false, err
	case apiVersion == v0:
		p, err = decodeABACv0(top)
		return p, false, err
	default:
		return ABACPolicy{}, false, fmt.Errorf("no kind %q is registered for version %q", abacKind, apiVersion)
	}
}

func decodeABACv1beta1(top abacFields) (ABACPolicy, error) {
	raw, ok := top["spec"]
	if !ok || string(raw) == "null" {
		return ABACPolicy{}, nil // no subject: matches nothing
	}
	spec, err := decodeFields(raw)
	if err != nil {
		return ABACPolicy{}, fmt.Errorf("spec: %w", err)
	}
	var p ABACPolicy
	if err := readABAC(spec, &p, true); err != nil {
		return ABACPolicy{}, fmt.Errorf("spec.%w", err)
	}
	if p.User == "*" || p.Group == "*" {
		p.User, p.Group = "", abacAllAuthenticated
	}
	return p, nil
}

// decodeABACv0 reads the legacy form and gives it its versioned meaning:
// no subject or a "*" subject is every authenticated user, an empty
// namespace or resource is "*", every API group matches, and a line with
// neither namespace nor resource also allows every non-resource path.
func decodeABACv0(top abacFields) (ABACPolicy, error) {
	var p ABACPolicy
	if err := readABAC(top, &p, false); err != nil {
		return ABACPolicy{}, err
	}
	if p.User == "" && p.Group == "" {
		p.Group = abacAllAuthenticated
	}
	if p.User == "*" || p.Group == "*" {
		p.User, p.Group = "", abacAllAuthenticated
	}
	if p.Namespace == "" && p.Resource == "" {
		p.NonResourcePath = "*"
	}
	if p.Namespace == "" {
		p.Namespace = "*"
	}
	if p.Resource == "" {
		p.Resource = "*"
	}
	p.APIGroup = "*"
	return p, nil
}

// readABAC fills p from the fields both versions share; versioned adds
// the fields only v1beta1 has.
func readABAC(f abacFields, p *ABACPolicy, versioned bool) error {
	type field struct {
		key string
		dst *string
	}
	strs := []field{{"user", &p.User}, {"group", &p.Group}, {"resource", &p.Resource}, {"namespace", &p.Namespace}}
	if versioned {
		strs = append(strs, field{"apiGroup", &p.APIGroup}, field{"nonResourcePath", &p.NonResourcePath})
	}
	for _, s := range strs {
		v, err := f.str(s.key)
		if err != nil {
			return err
		}
		*s.dst = v
	}
	ro, err := f.boolean("readonly")
	if err != nil {
		return err
	}
	p.Readonly = ro
	return nil
}
