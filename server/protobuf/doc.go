// Package protobuf encodes and decodes objects in the protobuf wire form of
// the built-in types, driven by the structural schema: field numbers come
// from schema.Field.ProtoNumber, emission rules from ProtoAlways, Pointer and
// the value shape, so no per-type code exists. The output is byte-identical
// to upstream's generated marshallers.
//
// Objects are the generic JSON values schema.Decode produces: map[string]any
// keyed by JSON member name, []any, string, int64, float64, bool and nil.
// The object message carries no kind or apiVersion; those travel in the
// envelope (codec.WrapProtobuf / codec.UnwrapProtobuf).
//
// Hand-encoded types and their generic forms:
//
//   - Time {1 seconds, 2 nanos}: RFC 3339 string in UTC, whole seconds; an
//     empty body is the zero time and decodes to an absent member.
//   - MicroTime: as Time with six fractional digits.
//   - Quantity {1 string}: the canonical string; an empty body is "0".
//   - IntOrString {1 type, 2 intVal, 3 strVal}: int64 or string.
//   - Duration {1 nanoseconds}: Go duration string ("1m30s").
//   - FieldsV1, RawExtension, apiextensions JSON {1 raw}: the JSON value the
//     raw bytes hold. Raw bytes that are not JSON (for example a nested
//     protobuf envelope) fail with ErrRawNotJSON: the object could not be
//     served as JSON either.
//   - JSONSchemaPropsOrArray / OrBool / OrStringArray: a schema object, an
//     array or a bool as in JSON.
//   - Verbs and ExtraValue {repeated 1 items}: an array of strings. They are
//     recognised as an Array schema with a ProtoMessage, or as any
//     array-valued map entry.
//
// Transcode writes the same message straight from an object's JSON, as the
// server stores it, without building the generic value: a token tape
// (jsontape.go) read once, fields written by a plan derived per schema
// (plan.go). Input it does not follow fails with ErrUnsupported, and the
// caller decodes and marshals instead.
//
// All functions are safe for concurrent use; schemas are only read.
package protobuf
