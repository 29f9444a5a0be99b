package protobuf

import (
	"slices"
	"strings"
	"sync"

	"platd/server/schema"
)

// maxIndexedNumber bounds the dense field-number index of a message; the
// built-in types stop well below it (JSONSchemaProps reaches 45), and a
// larger number falls back to a scan instead of a huge sparse slice.
const maxIndexedNumber = 256

// special names a message whose wire form is not its schema's structure.
type special uint8

const (
	plain          special = iota
	rawJSON                // FieldsV1, apiextensions JSON: {1 raw JSON}
	rawExtension           // runtime.RawExtension: {1 raw}
	propsOrArray           // JSONSchemaPropsOrArray
	propsOrBool            // JSONSchemaPropsOrBool
	propsOrStrings         // JSONSchemaPropsOrStringArray
	duration               // meta/v1 Duration {1 int64 nanoseconds}
	stringsWrapper         // Verbs, ExtraValue: {repeated 1 items}
)

// Message-name suffixes of the hand-encoded messages; the prefix is the
// brand's domain, so only the brand-free tail is matched.
var specialSuffixes = []struct {
	suffix string
	kind   special
}{
	{".apimachinery.pkg.apis.meta.v1.FieldsV1", rawJSON},
	{".apimachinery.pkg.runtime.RawExtension", rawExtension},
	{".apimachinery.pkg.apis.meta.v1.Duration", duration},
	{".JSONSchemaPropsOrArray", propsOrArray},
	{".JSONSchemaPropsOrBool", propsOrBool},
	{".JSONSchemaPropsOrStringArray", propsOrStrings},
	{".JSON", rawJSON},
}

// propsSuffix ends the message name of the schema the JSONSchemaPropsOr*
// messages embed.
const propsSuffix = ".JSONSchemaProps"

// layout is what the codec derives once per schema.
type layout struct {
	kind    special
	byNum   []*schema.Field // index: field number; nil where none
	ordered []*schema.Field // fields with a number, ascending
	fill    []*schema.Field // non-omitempty non-pointer members encoding/json always writes
	isProps bool            // the schema is JSONSchemaProps
}

// layouts caches one layout per schema pointer for the life of the process;
// a server loads its catalog once, so the cache is bounded by the catalog.
var layouts sync.Map // *schema.Schema → *layout

// layoutOf returns the cached layout of s; schemas are immutable after
// Seal, so the cache never goes stale.
func layoutOf(s *schema.Schema) *layout {
	if l, ok := layouts.Load(s); ok {
		return l.(*layout)
	}
	l := buildLayout(s)
	actual, _ := layouts.LoadOrStore(s, l)
	return actual.(*layout)
}

func buildLayout(s *schema.Schema) *layout {
	l := &layout{kind: specialOf(s)}
	l.isProps = strings.HasSuffix(s.ProtoMessage, propsSuffix)
	maxNum := 0
	for _, f := range s.Fields {
		if f.ProtoNumber <= 0 {
			continue
		}
		l.ordered = append(l.ordered, f)
		maxNum = max(maxNum, f.ProtoNumber)
		if !f.Inline && !f.OmitEmpty && !f.Pointer && f.Name != "" {
			l.fill = append(l.fill, f)
		}
	}
	slices.SortStableFunc(l.ordered, func(a, b *schema.Field) int { return a.ProtoNumber - b.ProtoNumber })
	if maxNum <= maxIndexedNumber {
		l.byNum = make([]*schema.Field, maxNum+1)
		for _, f := range l.ordered {
			if l.byNum[f.ProtoNumber] == nil {
				l.byNum[f.ProtoNumber] = f
			}
		}
	}
	return l
}

func specialOf(s *schema.Schema) special {
	if s.ProtoMessage == "" {
		return plain
	}
	if s.Type == schema.Array {
		return stringsWrapper
	}
	for _, x := range specialSuffixes {
		if strings.HasSuffix(s.ProtoMessage, x.suffix) {
			return x.kind
		}
	}
	return plain
}

// field returns the field numbered num, or nil.
func (l *layout) field(num int) *schema.Field {
	if l.byNum != nil {
		if num < len(l.byNum) {
			return l.byNum[num]
		}
		return nil
	}
	for _, f := range l.ordered {
		if f.ProtoNumber == num {
			return f
		}
	}
	return nil
}
