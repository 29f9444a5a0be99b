package cel

import "platd/server/jsonschema"

// validFieldPath checks a rule's fieldPath (".a.b", ".a['b.c']", map keys
// through either form) against s and returns it as an error field path
// relative to s ("a.b", "a[key]").
func validFieldPath(jsonPath string, s *jsonschema.Props) (string, error) {
	p, _, err := jsonschema.ValidFieldPath(jsonPath, s, true)
	return p, err
}
