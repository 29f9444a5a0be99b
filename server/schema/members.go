package schema

// EachMember calls fn with the name and the raw JSON value of every
// member of the object data starts with, in document order, decoding no
// value, and returns the length of that object (with the white space
// before it): readers of a few members of stored objects skip the rest at
// the cost of one scan. What follows the object is not read. name is
// unescaped; raw is a subslice of data; both are valid only during the
// call. An error of fn stops the walk and is returned; malformed JSON, or
// data not starting with an object, is an error wrapping ErrSyntax.
func EachMember(data []byte, fn func(name, raw []byte) error) (int, error) {
	s := &scanner{data: data}
	c, err := s.expectValue()
	if err != nil {
		return 0, err
	}
	if c != '{' {
		return 0, errChar(c, "looking for beginning of object")
	}
	s.pos++
	var unescaped []byte
	err = s.eachMember(func(key []byte, esc bool) error {
		if esc {
			unescaped = AppendUnquote(unescaped[:0], key)
			key = unescaped
		}
		if _, err := s.expectValue(); err != nil {
			return err
		}
		start := s.pos
		if err := s.skipAt(1); err != nil {
			return err
		}
		return fn(key, data[start:s.pos])
	})
	if err != nil {
		return 0, err
	}
	return s.pos, nil
}

// OnlySpace reports whether b holds nothing but JSON white space.
func OnlySpace(b []byte) bool {
	s := &scanner{data: b}
	s.skipSpace()
	return s.pos == len(b)
}
