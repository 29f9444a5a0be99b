package registry

// Strings reads a decoded JSON array of strings (such as finalizers),
// skipping any element that is not a string.
func Strings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// AnyList turns strings into a decoded JSON array.
func AnyList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}
