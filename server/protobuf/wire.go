package protobuf

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// openBytes writes the tag of a length-delimited field and a one-byte
// length placeholder; the body follows and closeBytes fixes the length.
// It returns the offset where the body starts.
func openBytes(dst []byte, num protowire.Number) ([]byte, int) {
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	dst = append(dst, 0)
	return dst, len(dst)
}

// closeBytes writes the body length begun at start, moving the body when
// the length needs more than the placeholder byte.
func closeBytes(dst []byte, start int) []byte {
	n := len(dst) - start
	if n < 0x80 {
		dst[start-1] = byte(n)
		return dst
	}
	k := protowire.SizeVarint(uint64(n))
	for range k - 1 {
		dst = append(dst, 0)
	}
	copy(dst[start-1+k:], dst[start:start+n])
	protowire.AppendVarint(dst[:start-1], uint64(n))
	return dst
}

// openSized is openBytes for a body of about guess bytes: the length
// placeholder has the width that length needs, so closeSized moves the
// body only when the guess was in another size class.
func openSized(dst []byte, num protowire.Number, guess int) ([]byte, int, int) {
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	w := protowire.SizeVarint(uint64(guess))
	for range w {
		dst = append(dst, 0)
	}
	return dst, len(dst), w
}

// closeSized writes the body length begun at start behind a placeholder
// of width bytes.
func closeSized(dst []byte, start, width int) []byte {
	n := len(dst) - start
	k := protowire.SizeVarint(uint64(n))
	switch {
	case k > width:
		for range k - width {
			dst = append(dst, 0)
		}
		copy(dst[start+k-width:], dst[start:start+n])
		start += k - width
	case k < width:
		copy(dst[start-(width-k):], dst[start:start+n])
		dst = dst[:len(dst)-(width-k)]
		start -= width - k
	}
	protowire.AppendVarint(dst[:start-k], uint64(n))
	return dst
}

func appendStringField(dst []byte, num protowire.Number, s string) []byte {
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	return protowire.AppendString(dst, s)
}

func appendVarintField(dst []byte, num protowire.Number, v uint64) []byte {
	dst = protowire.AppendTag(dst, num, protowire.VarintType)
	return protowire.AppendVarint(dst, v)
}

// fieldError names the member path of a failure, outermost first.
type fieldError struct {
	path string
	err  error
}

func (e *fieldError) Error() string { return e.path + ": " + e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// maxErrorPath bounds the member path an error names: past it, outer
// members are no longer prepended, so an error raised at the bottom of
// hostile deep nesting costs linear, not quadratic, time.
const maxErrorPath = 512

// at prefixes err with the member name; an empty name adds nothing.
func at(name string, err error) error {
	if name == "" {
		return err
	}
	if fe, ok := err.(*fieldError); ok {
		if len(fe.path) >= maxErrorPath {
			return fe
		}
		sep := "."
		if strings.HasPrefix(fe.path, "[") {
			sep = ""
		}
		return &fieldError{path: name + sep + fe.path, err: fe.err}
	}
	return &fieldError{path: name, err: err}
}

// atIndex prefixes err with a list index or map key.
func atIndex(key any, err error) error {
	k := fmt.Sprintf("[%v]", key)
	if s, ok := key.(string); ok {
		k = fmt.Sprintf("[%q]", s)
	}
	if fe, ok := err.(*fieldError); ok {
		if len(fe.path) >= maxErrorPath {
			return fe
		}
		sep := "."
		if strings.HasPrefix(fe.path, "[") {
			sep = ""
		}
		return &fieldError{path: k + sep + fe.path, err: fe.err}
	}
	return &fieldError{path: k, err: err}
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

// parseErr turns a negative protowire length into an error.
func parseErr(n int) error {
	return fmt.Errorf("%w: %v", ErrMalformed, protowire.ParseError(n))
}
