package discovery

import (
	"platd/codec"
)

// format is the representation chosen for a discovery response.
type format int

const (
	formatNone format = iota // no acceptable clause: 406
	formatJSON
	formatYAML
	formatProtobuf   // the brand's protobuf envelope
	formatAggregated // aggregated discovery; see outcome.version and outcome.protobuf
)

// Media types and parameter values of discovery negotiation.
const (
	mediaJSON            = "application/json"
	mediaYAML            = "application/yaml"
	paramAs              = "as"
	paramGroup           = "g"
	paramVersion         = "v"
	aggregatedAs         = "APIGroupDiscoveryList"
	aggregatedV2         = "v2"
	aggregatedV2Beta1    = "v2beta1"
	acceptedMediaMessage = "only the following media types are accepted: application/json, application/yaml, "
)

// outcome is the result of negotiation.
type outcome struct {
	format format
	// version is the apidiscovery version for formatAggregated.
	version string
	// protobuf says formatAggregated is in the protobuf envelope.
	protobuf bool
	// params are the chosen clause's parameters (pretty=1 selects indent).
	params map[string]string
}

// negotiate picks the representation for accept. aggregated says whether
// the endpoint offers aggregated discovery (only /api and /apis do);
// discoveryGroup is the branded apidiscovery group and protobufType the
// brand's protobuf media type. Clauses are tried in negotiation order; a
// clause asking for a conversion this endpoint cannot make is skipped, as
// upstream skips unacceptable clauses.
func negotiate(accept string, aggregated bool, discoveryGroup, protobufType string) outcome {
	clauses := codec.ParseAccept(accept)
	if len(clauses) == 0 {
		return outcome{format: formatJSON}
	}
	for _, c := range clauses {
		wild := c.Type == "*" || (c.Type == "application" && c.Subtype == "*")
		proto := c.Type+"/"+c.Subtype == protobufType
		as, hasAs := c.Params[paramAs]
		if hasAs {
			if !aggregated || as != aggregatedAs || c.Params[paramGroup] != discoveryGroup {
				continue
			}
			v := c.Params[paramVersion]
			if v != aggregatedV2 && v != aggregatedV2Beta1 {
				continue
			}
			if wild || proto || (c.Type == "application" && c.Subtype == "json") {
				return outcome{format: formatAggregated, version: v, protobuf: proto, params: c.Params}
			}
			continue
		}
		switch {
		case wild, c.Type == "application" && c.Subtype == "json":
			return outcome{format: formatJSON, params: c.Params}
		case c.Type == "application" && c.Subtype == "yaml":
			return outcome{format: formatYAML, params: c.Params}
		case proto:
			return outcome{format: formatProtobuf, params: c.Params}
		}
	}
	return outcome{format: formatNone}
}
