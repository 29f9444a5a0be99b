package cel

import (
	"fmt"
	"net/url"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// urlType is the CEL type of url(...) values.
var urlType = cel.ObjectType("kubernetes.URL")

// urlVal is a parsed URL.
type urlVal struct{ u *url.URL }

func (v urlVal) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(v.u).AssignableTo(t) {
		return v.u, nil
	}
	if reflect.TypeOf("").AssignableTo(t) {
		return v.u.String(), nil
	}
	return nil, fmt.Errorf("type conversion error from 'URL' to '%v'", t)
}

func (v urlVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case urlType:
		return v
	case types.StringType:
		return types.String(v.u.String())
	case types.TypeType:
		return urlType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", urlType, t)
}

func (v urlVal) Equal(o ref.Val) ref.Val {
	w, ok := o.(urlVal)
	return types.Bool(ok && *v.u == *w.u)
}
func (v urlVal) Type() ref.Type { return urlType }
func (v urlVal) Value() any     { return v.u }

func urlsLib() cel.EnvOption {
	strFn := func(name, id string, f func(*url.URL) string) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(id, []*cel.Type{urlType}, cel.StringType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			u, ok := v.(urlVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			return types.String(f(u.u))
		})))
	}
	return cel.Lib(libOf(
		cel.Function("url", cel.Overload("string_to_url", []*cel.Type{cel.StringType}, urlType, cel.UnaryBinding(stringToURL))),
		cel.Function("isURL", cel.Overload("is_url_string", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(func(v ref.Val) ref.Val {
			s, ok := v.(types.String)
			if !ok {
				return types.MaybeNoSuchOverloadErr(v)
			}
			_, err := url.ParseRequestURI(string(s))
			return types.Bool(err == nil)
		}))),
		strFn("getScheme", "url_get_scheme", func(u *url.URL) string { return u.Scheme }),
		strFn("getHost", "url_get_host", func(u *url.URL) string { return u.Host }),
		strFn("getHostname", "url_get_hostname", func(u *url.URL) string { return u.Hostname() }),
		strFn("getPort", "url_get_port", func(u *url.URL) string { return u.Port() }),
		strFn("getEscapedPath", "url_get_escaped_path", func(u *url.URL) string { return u.EscapedPath() }),
		cel.Function("getQuery", cel.MemberOverload("url_get_query", []*cel.Type{urlType}, cel.MapType(cel.StringType, cel.ListType(cel.StringType)),
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				u, ok := v.(urlVal)
				if !ok {
					return types.MaybeNoSuchOverloadErr(v)
				}
				q := u.u.Query()
				m := make(map[ref.Val]ref.Val, len(q))
				for k, vs := range q {
					m[types.String(k)] = types.NewStringList(types.DefaultTypeAdapter, vs)
				}
				return types.NewRefValMap(types.DefaultTypeAdapter, m)
			}))),
	))
}

func stringToURL(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	// ParseRequestURI demands an absolute URL (the OpenAPI uri format);
	// Parse then reads fragments correctly.
	if _, err := url.ParseRequestURI(string(s)); err != nil {
		return types.NewErr("URL parse error during conversion from string: %v", err)
	}
	u, err := url.Parse(string(s))
	if err != nil {
		return types.NewErr("URL parse error during conversion from string: %v", err)
	}
	return urlVal{u: u}
}
