package codec

import "sigs.k8s.io/yaml"

// JSONToYAML converts a JSON document to the YAML the API server serves:
// object keys sorted, block style, YAML's own trailing newline. The
// conversion is the same as the upstream serializer's (JSON through the
// YAML library), so the bytes match upstream's. Errors wrap ErrYAML.
func JSONToYAML(json []byte) ([]byte, error) {
	y, err := yaml.JSONToYAML(json)
	if err != nil {
		return nil, wrap(ErrYAML, err)
	}
	return y, nil
}

// YAMLToJSON converts a YAML request body to compact JSON with object keys
// sorted. A repeated key keeps its last value; use YAMLToJSONStrict to
// reject it. Errors wrap ErrYAML and keep the library's message text.
func YAMLToJSON(y []byte) ([]byte, error) {
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		return nil, wrap(ErrYAML, err)
	}
	return j, nil
}

// YAMLToJSONStrict is YAMLToJSON that also fails on a key repeated within
// one mapping, for strict field validation.
func YAMLToJSONStrict(y []byte) ([]byte, error) {
	j, err := yaml.YAMLToJSONStrict(y)
	if err != nil {
		return nil, wrap(ErrYAML, err)
	}
	return j, nil
}
