package builtin

import (
	"context"
	"errors"
	"testing"

	"platd/security"
	"platd/server/admission"
	"platd/server/apierr"
	"platd/server/registry"
)

func TestAlwaysDeny(t *testing.T) {
	t.Parallel()
	cms := kindOf(coreV1(brand), "ConfigMap")
	for _, c := range []struct {
		name string
		a    admission.Attributes
		want string
	}{
		{"server's own write", admission.Attributes{Descriptor: cms, Operation: admission.OpCreate, Name: "c"}, ""},
		{"client create", admission.Attributes{Descriptor: cms, Operation: admission.OpCreate, Object: registry.Object{"metadata": map[string]any{"generateName": "g-"}}, User: &security.User{Name: "alice"}},
			`configmaps "g-" is forbidden: admission control is denying all modifications`},
		{"client connect", admission.Attributes{Descriptor: cms, Operation: admission.OpConnect, Name: "c", User: &security.User{Name: "alice"}},
			`configmaps "c" is forbidden: admission control is denying all modifications`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := AlwaysDeny{}.Mutate(context.Background(), &c.a)
			if out != nil {
				t.Errorf("returned an object: %v", out)
			}
			if got := errMessage(err); got != c.want {
				t.Errorf("error %q, want %q", got, c.want)
			}
			if err != nil && apierr.Code(err) != 403 {
				t.Errorf("code %d, want 403", apierr.Code(err))
			}
		})
	}
}

func TestNamespaceExists(t *testing.T) {
	t.Parallel()
	core := coreV1(brand)
	namespaces, cms := kindOf(core, "Namespace"), kindOf(core, "ConfigMap")
	n := NewNamespaceExists(namespaces)
	l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{namespaces: {decodeJSON(t, `{"metadata":{"name":"here"}}`)}}}
	for _, c := range []struct {
		name string
		a    admission.Attributes
		l    registry.Lookup
		want string
		code int
	}{
		{name: "existing namespace", a: admission.Attributes{Descriptor: cms, Operation: admission.OpCreate, Namespace: "here"}, l: l},
		{name: "missing namespace", a: admission.Attributes{Descriptor: cms, Operation: admission.OpDelete, Namespace: "gone"}, l: l,
			want: `namespaces "gone" not found`, code: 404},
		{name: "cluster-scoped", a: admission.Attributes{Descriptor: kindOf(core, "Node"), Operation: admission.OpCreate}, l: l},
		{name: "the namespace itself", a: admission.Attributes{Descriptor: namespaces, Operation: admission.OpUpdate, Namespace: "gone", Name: "gone"}, l: l},
		{name: "connect", a: admission.Attributes{Descriptor: cms, Operation: admission.OpConnect, Namespace: "gone"}, l: l},
		{name: "read failure", a: admission.Attributes{Descriptor: cms, Operation: admission.OpUpdate, Namespace: "here"}, l: fakeLookup{err: errors.New("disk")},
			want: "Internal error occurred: disk", code: 500},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.a.Lookup = c.l
			err := n.Validate(context.Background(), &c.a)
			if got := errMessage(err); got != c.want {
				t.Fatalf("error %q, want %q", got, c.want)
			}
			if err != nil && apierr.Code(err) != c.code {
				t.Errorf("code %d, want %d", apierr.Code(err), c.code)
			}
		})
	}
}

// errMessage is the Status message of err, "" for none.
func errMessage(err error) string {
	if err == nil {
		return ""
	}
	return apierr.FromError(err).Status.Message
}
