package cel

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"platd/security"
	"platd/server/selector"
)

// The types of the authorizer library: an authorizer, the checks built
// from it, and a check's decision. Their names are upstream's, as type
// errors print them.
var (
	authorizerType    = cel.ObjectType("kubernetes.authorization.Authorizer")
	pathCheckType     = cel.ObjectType("kubernetes.authorization.PathCheck")
	groupCheckType    = cel.ObjectType("kubernetes.authorization.GroupCheck")
	resourceCheckType = cel.ObjectType("kubernetes.authorization.ResourceCheck")
	decisionType      = cel.ObjectType("kubernetes.authorization.Decision")
)

// authzLib is the authorizer library admission expressions call on the
// authorizer variables, with upstream's overload ids:
//
//	authorizer.path(string) PathCheck
//	authorizer.group(string) GroupCheck
//	authorizer.serviceAccount(namespace, name string) Authorizer
//	GroupCheck.resource(string) ResourceCheck
//	ResourceCheck.subresource/namespace/name(string) ResourceCheck
//	PathCheck.check(verb) Decision, ResourceCheck.check(verb) Decision
//	Decision.allowed() bool, reason() string, errored() bool, error() string
//
// The values are those of authz_eval.go; a check asks the request's
// AdmissionAuthorizer. A resource check built from a group asks for
// every version ("*").
func authzLib() cel.EnvOption {
	str := cel.StringType
	build := func(name, id string, recv *cel.Type, kind authzKind, result *cel.Type, change func(*authzVal, string)) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(id, []*cel.Type{recv, str}, result, cel.BinaryBinding(authzBuild(id, kind, change))))
	}
	decision := func(name, id string, result *cel.Type, get func(*authzVal) ref.Val) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(id, []*cel.Type{decisionType}, result, cel.UnaryBinding(func(v ref.Val) ref.Val {
			d, ok := asAuthz(v, kindDecision)
			if !ok {
				return noOverload(id)
			}
			return get(d)
		})))
	}
	check := func(id string, kind authzKind) func(lhs, rhs ref.Val) ref.Val {
		return func(lhs, rhs ref.Val) ref.Val {
			v, ok := asAuthz(lhs, kind)
			verb, vok := rhs.(types.String)
			if !ok || !vok {
				return noOverload(id)
			}
			return v.check(string(verb))
		}
	}
	return cel.Lib(libOf(
		build("path", "authorizer_path", authorizerType, kindAuthorizer, pathCheckType, func(v *authzVal, s string) {
			v.kind, v.path = kindPathCheck, s
		}),
		build("group", "authorizer_group", authorizerType, kindAuthorizer, groupCheckType, func(v *authzVal, s string) {
			v.kind, v.group = kindGroupCheck, s
		}),
		cel.Function("serviceAccount", cel.MemberOverload("authorizer_serviceaccount", []*cel.Type{authorizerType, str, str}, authorizerType,
			cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				v, ok := asAuthz(args[0], kindAuthorizer)
				ns, nok := args[1].(types.String)
				name, mok := args[2].(types.String)
				if !ok || !nok || !mok {
					return noOverload("authorizer_serviceaccount")
				}
				return &authzVal{kind: kindAuthorizer, a: v.a, user: serviceAccountUser(string(ns), string(name))}
			}))),
		build("resource", "groupcheck_resource", groupCheckType, kindGroupCheck, resourceCheckType, func(v *authzVal, s string) {
			v.kind, v.resource, v.version = kindResourceCheck, s, "*"
		}),
		build("subresource", "resourcecheck_subresource", resourceCheckType, kindResourceCheck, resourceCheckType, func(v *authzVal, s string) { v.subresource = s }),
		build("namespace", "resourcecheck_namespace", resourceCheckType, kindResourceCheck, resourceCheckType, func(v *authzVal, s string) { v.namespace = s }),
		build("name", "resourcecheck_name", resourceCheckType, kindResourceCheck, resourceCheckType, func(v *authzVal, s string) { v.name = s }),
		cel.Function("check",
			cel.MemberOverload("pathcheck_check", []*cel.Type{pathCheckType, str}, decisionType, cel.BinaryBinding(check("pathcheck_check", kindPathCheck))),
			cel.MemberOverload("resourcecheck_check", []*cel.Type{resourceCheckType, str}, decisionType, cel.BinaryBinding(check("resourcecheck_check", kindResourceCheck)))),
		decision("errored", "decision_errored", cel.BoolType, func(d *authzVal) ref.Val { return types.Bool(d.err != nil) }),
		decision("error", "decision_error", cel.StringType, func(d *authzVal) ref.Val {
			if d.err == nil {
				return types.String("")
			}
			return types.String(d.err.Error())
		}),
		decision("allowed", "decision_allowed", cel.BoolType, func(d *authzVal) ref.Val { return types.Bool(d.decision == security.DecisionAllow) }),
		decision("reason", "decision_reason", cel.StringType, func(d *authzVal) ref.Val { return types.String(d.reason) }),
	))
}

// authzSelectorsLib is the selector filters of resource checks
// (AuthorizeWithSelectors, on by default in v1.32):
//
//	ResourceCheck.fieldSelector(string) ResourceCheck
//	ResourceCheck.labelSelector(string) ResourceCheck
//
// A selector that does not parse is left out of the check, as upstream
// hands authorizers none then.
func authzSelectorsLib() cel.EnvOption {
	args := []*cel.Type{resourceCheckType, cel.StringType}
	return cel.Lib(libOf(
		cel.Function("fieldSelector", cel.MemberOverload("authorizer_fieldselector", args, resourceCheckType,
			cel.BinaryBinding(authzBuild("authorizer_fieldselector", kindResourceCheck, func(v *authzVal, s string) {
				v.fieldSelector = nil
				if f, err := selector.ParseFields(s); err == nil {
					v.fieldSelector = f.AuthzRequirements()
				}
			})))),
		cel.Function("labelSelector", cel.MemberOverload("authorizer_labelselector", args, resourceCheckType,
			cel.BinaryBinding(authzBuild("authorizer_labelselector", kindResourceCheck, func(v *authzVal, s string) {
				v.labelSelector = nil
				if l, err := selector.ParseLabels(s); err == nil {
					v.labelSelector = l.AuthzRequirements()
				}
			})))),
	))
}
