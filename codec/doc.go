// Package codec holds the wire-format pieces the REST layer composes:
// Accept and Content-Type parsing, the pretty-print rule, JSON indentation,
// YAML conversion, the protobuf envelope, watch framing and response
// compression.
//
// The package imports nothing else of this module. Everything that varies
// by brand (for example the protobuf media type) is passed in by the
// caller. Every function is safe for concurrent use unless its doc says
// otherwise; values with state (WatchEncoder, the gzip writer) belong to
// one request.
package codec
