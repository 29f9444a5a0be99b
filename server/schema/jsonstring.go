package schema

import "platd/codec"

// The JSON string quoting and float formatting of Encode are codec's
// AppendJSONString and AppendJSONFloat (NaN and infinities become null).
// These names keep the package's tests, which pin both to encoding/json,
// pointed at the code Encode runs.

func appendString(dst []byte, s string) []byte { return codec.AppendJSONString(dst, s) }

func appendFloat(dst []byte, f float64) []byte { return codec.AppendJSONFloat(dst, f) }
