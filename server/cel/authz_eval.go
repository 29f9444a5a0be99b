package cel

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"platd/security"
)

// AdmissionAuthorizer backs the `authorizer` and
// `authorizer.requestResource` variables of one admission request: the
// checks expressions build are decided by Authorizer for User. The
// resource fields are the request's.
type AdmissionAuthorizer struct {
	Ctx                                                    context.Context
	Authorizer                                             security.Authorizer
	User                                                   *security.User
	Group, Version, Resource, Subresource, Namespace, Name string
}

// authzKind tells the values of the authorizer library apart.
type authzKind int

const (
	kindAuthorizer authzKind = iota
	kindPathCheck
	kindGroupCheck
	kindResourceCheck
	kindDecision
)

// authzVal is a value of the authorizer library: an authorizer (for a
// user), a check being built, or a check's decision. Values are
// immutable; each builder returns a changed copy.
type authzVal struct {
	kind authzKind
	a    *AdmissionAuthorizer
	user *security.User

	path                                                   string
	group, version, resource, subresource, namespace, name string
	fieldSelector, labelSelector                           []security.SelectorRequirement

	decision security.Decision
	reason   string
	err      error
}

func (v *authzVal) celType() *types.Type {
	switch v.kind {
	case kindPathCheck:
		return pathCheckType
	case kindGroupCheck:
		return groupCheckType
	case kindResourceCheck:
		return resourceCheckType
	case kindDecision:
		return decisionType
	}
	return authorizerType
}

func (v *authzVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from '%s' to '%v'", v.celType(), t)
}

func (v *authzVal) ConvertToType(t ref.Type) ref.Val {
	if t == types.TypeType {
		return v.celType()
	}
	return types.NewErr("type conversion error from '%s' to '%s'", v.celType(), t)
}

func (v *authzVal) Equal(other ref.Val) ref.Val { return types.Bool(v == other) }
func (v *authzVal) Type() ref.Type              { return v.celType() }
func (v *authzVal) Value() any                  { return v }

// authorizer is the value of `authorizer`.
func (a *AdmissionAuthorizer) authorizer() ref.Val {
	return &authzVal{kind: kindAuthorizer, a: a, user: a.User}
}

// requestResource is the value of `authorizer.requestResource`: a check
// of the request's own resource, in its version.
func (a *AdmissionAuthorizer) requestResource() ref.Val {
	return &authzVal{kind: kindResourceCheck, a: a, user: a.User, group: a.Group, version: a.Version,
		resource: a.Resource, subresource: a.Subresource, namespace: a.Namespace, name: a.Name}
}

func asAuthz(v ref.Val, kind authzKind) (*authzVal, bool) {
	a, ok := v.(*authzVal)
	return a, ok && a.kind == kind
}

func noOverload(id string) ref.Val { return types.NewErr("no such overload: %s", id) }

// authzBuild is a binding that derives a value from a receiver of kind
// with one string argument.
func authzBuild(id string, kind authzKind, change func(next *authzVal, arg string)) func(lhs, rhs ref.Val) ref.Val {
	return func(lhs, rhs ref.Val) ref.Val {
		v, ok := asAuthz(lhs, kind)
		s, sok := rhs.(types.String)
		if !ok || !sok {
			return noOverload(id)
		}
		next := *v
		change(&next, string(s))
		return &next
	}
}

// check decides a path or resource check for verb.
func (v *authzVal) check(verb string) ref.Val {
	attrs := security.Attributes{User: v.user, Verb: verb}
	if v.kind == kindPathCheck {
		attrs.Path = v.path
	} else {
		attrs.ResourceRequest = true
		attrs.APIGroup, attrs.APIVersion, attrs.Resource = v.group, v.version, v.resource
		attrs.Subresource, attrs.Namespace, attrs.Name = v.subresource, v.namespace, v.name
		attrs.FieldSelector, attrs.LabelSelector = v.fieldSelector, v.labelSelector
	}
	d := &authzVal{kind: kindDecision}
	if v.a == nil || v.a.Authorizer == nil {
		d.err = errors.New("no authorizer")
		return d
	}
	ctx := v.a.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	d.decision, d.reason, d.err = v.a.Authorizer.Authorize(ctx, attrs)
	return d
}

// serviceAccountUser is the user of a service account, as its tokens
// authenticate it.
func serviceAccountUser(namespace, name string) *security.User {
	return &security.User{Name: security.ServiceAccountUsername(namespace, name), Groups: security.ServiceAccountGroups(namespace)}
}
