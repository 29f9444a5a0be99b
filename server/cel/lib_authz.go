package cel

import "github.com/google/cel-go/cel"

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

// authzLib declares the authorizer functions admission expressions may
// call on the authorizer variables:
//
//	authorizer.path(string) PathCheck
//	authorizer.group(string) GroupCheck
//	authorizer.serviceAccount(namespace, name string) Authorizer
//	GroupCheck.resource(string) ResourceCheck
//	ResourceCheck.subresource/namespace/name(string) ResourceCheck
//	PathCheck.check(verb) Decision, ResourceCheck.check(verb) Decision
//	Decision.allowed() bool, reason() string, errored() bool, error() string
//
// They are declarations for type checking only, with upstream's overload
// ids: platd stores admission policies but does not evaluate them, so a
// program built from these would find no implementation.
func authzLib() cel.EnvOption {
	member := func(name, id string, args []*cel.Type, result *cel.Type) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(id, args, result))
	}
	str := cel.StringType
	return cel.Lib(libOf(
		member("path", "authorizer_path", []*cel.Type{authorizerType, str}, pathCheckType),
		member("group", "authorizer_group", []*cel.Type{authorizerType, str}, groupCheckType),
		member("serviceAccount", "authorizer_serviceaccount", []*cel.Type{authorizerType, str, str}, authorizerType),
		member("resource", "groupcheck_resource", []*cel.Type{groupCheckType, str}, resourceCheckType),
		member("subresource", "resourcecheck_subresource", []*cel.Type{resourceCheckType, str}, resourceCheckType),
		member("namespace", "resourcecheck_namespace", []*cel.Type{resourceCheckType, str}, resourceCheckType),
		member("name", "resourcecheck_name", []*cel.Type{resourceCheckType, str}, resourceCheckType),
		cel.Function("check",
			cel.MemberOverload("pathcheck_check", []*cel.Type{pathCheckType, str}, decisionType),
			cel.MemberOverload("resourcecheck_check", []*cel.Type{resourceCheckType, str}, decisionType)),
		member("errored", "decision_errored", []*cel.Type{decisionType}, cel.BoolType),
		member("error", "decision_error", []*cel.Type{decisionType}, cel.StringType),
		member("allowed", "decision_allowed", []*cel.Type{decisionType}, cel.BoolType),
		member("reason", "decision_reason", []*cel.Type{decisionType}, cel.StringType),
	))
}

// authzSelectorsLib declares the selector filters of resource checks
// (AuthorizeWithSelectors, on by default in v1.32):
//
//	ResourceCheck.fieldSelector(string) ResourceCheck
//	ResourceCheck.labelSelector(string) ResourceCheck
func authzSelectorsLib() cel.EnvOption {
	args := []*cel.Type{resourceCheckType, cel.StringType}
	return cel.Lib(libOf(
		cel.Function("fieldSelector", cel.MemberOverload("authorizer_fieldselector", args, resourceCheckType)),
		cel.Function("labelSelector", cel.MemberOverload("authorizer_labelselector", args, resourceCheckType)),
	))
}
