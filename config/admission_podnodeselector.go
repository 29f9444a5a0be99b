package config

import (
	"bytes"
	"encoding/json"
	"errors"

	"sigs.k8s.io/yaml"
)

// PodNodeSelectorDefaultKey is the key of a PodNodeSelectorConfiguration
// holding the node selector of namespaces that set none.
const PodNodeSelectorDefaultKey = "clusterDefaultNodeSelector"

// PodNodeSelectorConfiguration is the PodNodeSelector plugin's
// configuration, upstream's unversioned map: under
// PodNodeSelectorDefaultKey the node selector of a namespace without the
// node-selector annotation, under a namespace's name the whitelist its
// pods' node selectors must keep to. Values are label selectors of
// key=value pairs separated by commas; they are parsed, and refused, only
// when a pod is admitted, as upstream does. nil is none.
type PodNodeSelectorConfiguration map[string]string

// ClusterDefault is the node selector of namespaces that set none.
func (c PodNodeSelectorConfiguration) ClusterDefault() string { return c[PodNodeSelectorDefaultKey] }

// Whitelist is the whitelist of the namespace ns, "" for none.
func (c PodNodeSelectorConfiguration) Whitelist(ns string) string { return c[ns] }

// podNodeSelectorFile is the plugin's configuration as written: one
// top-level member, matched without regard to case as Go's JSON decoder
// matches (upstream decodes it so).
type podNodeSelectorFile struct {
	PodNodeSelectorPluginConfig map[string]string `json:"podNodeSelectorPluginConfig"`
}

// decodePodNodeSelectorPlugin reads the PodNodeSelector configuration as
// leniently as upstream: it is never refused. Every document of the file
// is read into one configuration, later ones adding to and replacing what
// earlier ones set, as upstream's reader does. Members other than
// podNodeSelectorPluginConfig are ignored, and so are its values that are
// not strings; a document that is neither YAML nor JSON configures
// nothing. (Upstream retries a JSON stream that fails to parse forever;
// here the stream ends there.)
func decodePodNodeSelectorPlugin(data []byte, _ Brand, into *AdmissionPlugins) error {
	into.PodNodeSelector = nil
	var f podNodeSelectorFile
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		d := json.NewDecoder(bytes.NewReader(trimmed))
		for {
			// A value of the wrong type is skipped and the rest still
			// decoded; the error only reports the first such value.
			err := d.Decode(&f)
			var te *json.UnmarshalTypeError
			if err != nil && !errors.As(err, &te) {
				break
			}
		}
	} else {
		for _, doc := range yamlDocuments(data) {
			js, err := yaml.YAMLToJSON(doc)
			if err != nil {
				continue
			}
			_ = json.Unmarshal(js, &f)
		}
	}
	if len(f.PodNodeSelectorPluginConfig) > 0 {
		into.PodNodeSelector = PodNodeSelectorConfiguration(f.PodNodeSelectorPluginConfig)
	}
	return nil
}

// yamlDocuments splits a YAML stream into its documents: a line starting
// with "---" followed by nothing but blanks or a comment separates them.
func yamlDocuments(data []byte) [][]byte {
	var docs [][]byte
	start := 0
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off + 1
		}
		line := data[off:end]
		if rest, ok := bytes.CutPrefix(line, []byte("---")); ok {
			if t := bytes.TrimSpace(rest); len(t) == 0 || t[0] == '#' {
				docs = append(docs, data[start:off])
				start = end
			}
		}
		off = end
	}
	return append(docs, data[start:])
}
