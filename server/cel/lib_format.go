package cel

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"platd/server/validation"
)

// formatType is the CEL type of named formats (format.named(...)).
var formatType = cel.ObjectType("kubernetes.NamedFormat")

// formatVal is one named string format and its check, which returns the
// reasons a string does not match (none when it does).
type formatVal struct {
	name  string
	check func(string) []string
	// regexSize is the length of the regular expression the check is
	// priced as (upstream's figure).
	regexSize int
}

// maxFormatRegexSize bounds regexSize: validate is priced with it before
// the format is known.
const maxFormatRegexSize = 128

func (f formatVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from 'NamedFormat' to '%v'", t)
}
func (f formatVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case formatType:
		return f
	case types.TypeType:
		return formatType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", formatType, t)
}
func (f formatVal) Equal(o ref.Val) ref.Val {
	g, ok := o.(formatVal)
	return types.Bool(ok && f.name == g.name)
}
func (f formatVal) Type() ref.Type { return formatType }
func (f formatVal) Value() any     { return f }

// maskTrailingDash lets a prefix (as of generateName) end in '-'.
func maskTrailingDash(s string) string {
	if len(s) > 1 && s[len(s)-1] == '-' {
		return s[:len(s)-1] + "a"
	}
	return s
}

var uuidRE = lazyRegexp(`(?i)(^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$)|(^[0-9a-f]{32}$)`)

// namedFormats are the formats format.named() knows, by name.
var namedFormats = map[string]formatVal{
	"dns1123Label":           {"DNS1123Label", validation.IsDNS1123Label, 30},
	"dns1123Subdomain":       {"DNS1123Subdomain", validation.IsDNS1123Subdomain, 60},
	"dns1035Label":           {"DNS1035Label", validation.IsDNS1035Label, 30},
	"qualifiedName":          {"QualifiedName", validation.IsQualifiedName, 60},
	"dns1123LabelPrefix":     {"DNS1123LabelPrefix", func(s string) []string { return validation.IsDNS1123Label(maskTrailingDash(s)) }, 30},
	"dns1123SubdomainPrefix": {"DNS1123SubdomainPrefix", func(s string) []string { return validation.IsDNS1123Subdomain(maskTrailingDash(s)) }, 60},
	"dns1035LabelPrefix":     {"DNS1035LabelPrefix", func(s string) []string { return validation.IsDNS1035Label(maskTrailingDash(s)) }, 30},
	"labelValue":             {"LabelValue", validation.IsValidLabelValue, 40},
	"uri": {"URI", func(s string) []string {
		if _, err := url.ParseRequestURI(s); err != nil {
			return []string{err.Error()}
		}
		return nil
	}, maxFormatRegexSize},
	"uuid": {"uuid", func(s string) []string {
		if !uuidRE().MatchString(s) {
			return []string{"does not match the UUID format"}
		}
		return nil
	}, 86},
	"byte": {"byte", func(s string) []string {
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			return []string{"invalid base64"}
		}
		return nil
	}, 83},
	"date": {"date", func(s string) []string {
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return []string{"invalid date"}
		}
		return nil
	}, 70},
	"datetime": {"datetime", func(s string) []string {
		if _, err := parseDateTime(s); err != nil {
			return []string{"invalid datetime"}
		}
		return nil
	}, 70},
}

func formatLib() cel.EnvOption {
	names := make([]string, 0, len(namedFormats))
	for n := range namedFormats {
		names = append(names, n)
	}
	sort.Strings(names)
	opts := []cel.EnvOption{
		cel.Function("format.named", cel.Overload("format-named", []*cel.Type{cel.StringType}, cel.OptionalType(formatType),
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				return strArg(v, func(s string) ref.Val {
					f, ok := namedFormats[s]
					if !ok {
						return types.OptionalNone
					}
					return types.OptionalOf(f)
				})
			}))),
		cel.Function("validate", cel.MemberOverload("format-validate", []*cel.Type{formatType, cel.StringType}, cel.OptionalType(cel.ListType(cel.StringType)),
			cel.BinaryBinding(func(fv, v ref.Val) ref.Val {
				f, ok := fv.(formatVal)
				if !ok {
					return types.MaybeNoSuchOverloadErr(fv)
				}
				return strArg(v, func(s string) ref.Val {
					if errs := f.check(s); len(errs) > 0 {
						return types.OptionalOf(types.NewStringList(types.DefaultTypeAdapter, errs))
					}
					return types.OptionalNone
				})
			}))),
	}
	for _, n := range names {
		f := namedFormats[n]
		opts = append(opts, cel.Function("format."+n, cel.Overload("format-"+n, nil, formatType,
			cel.FunctionBinding(func(...ref.Val) ref.Val { return f }))))
	}
	return cel.Lib(libOf(opts...))
}

// dateTimeLayouts are the date-time spellings accepted (those of the
// OpenAPI format library upstream uses).
var dateTimeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05",
}

// parseDateTime reads a date-time (T and Z in either case).
func parseDateTime(s string) (time.Time, error) {
	u := strings.ToUpper(s)
	var err error
	for _, l := range dateTimeLayouts {
		var t time.Time
		if t, err = time.Parse(l, u); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}
