package config

import (
	"encoding/json"

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
// leniently as upstream: it is never refused. Members other than
// podNodeSelectorPluginConfig are ignored, and so are its values that are
// not strings; a document that is neither YAML nor JSON configures
// nothing.
func decodePodNodeSelectorPlugin(data []byte, _ Brand, into *AdmissionPlugins) error {
	into.PodNodeSelector = nil
	if len(data) == 0 {
		return nil
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil
	}
	var f podNodeSelectorFile
	// A value of the wrong type is skipped and the rest still decoded;
	// the error only reports the first such value.
	_ = json.Unmarshal(js, &f)
	if len(f.PodNodeSelectorPluginConfig) > 0 {
		into.PodNodeSelector = PodNodeSelectorConfiguration(f.PodNodeSelectorPluginConfig)
	}
	return nil
}
