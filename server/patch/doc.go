// Package patch applies PATCH request bodies to objects: RFC 6902 JSON
// patches, RFC 7386 merge patches and schema-driven strategic merge
// patches. Objects are generic JSON values (map[string]any, []any, string,
// int64, float64, bool, nil). Every function is safe for concurrent use;
// none keeps a reference to its arguments after it returns, except where
// StrategicMerge says it takes ownership.
package patch
