package openapi

import "slices"

// param is one operation or path parameter.
type param struct {
	name, in, typ string
	required      bool
}

// Parameter types and locations.
const (
	inPath  = "path"
	inQuery = "query"
	tString = "string"
	tInt    = "integer"
	tBool   = "boolean"
)

// The parameters the REST verbs accept.
var (
	paramName      = param{name: "name", in: inPath, typ: tString, required: true}
	paramNamespace = param{name: "namespace", in: inPath, typ: tString, required: true}
	paramPretty    = param{name: "pretty", in: inQuery, typ: tString}

	// listParams are the query parameters of list and watch.
	listParams = []param{
		{name: "allowWatchBookmarks", in: inQuery, typ: tBool},
		{name: "continue", in: inQuery, typ: tString},
		{name: "fieldSelector", in: inQuery, typ: tString},
		{name: "labelSelector", in: inQuery, typ: tString},
		{name: "limit", in: inQuery, typ: tInt},
		{name: "resourceVersion", in: inQuery, typ: tString},
		{name: "resourceVersionMatch", in: inQuery, typ: tString},
		{name: "sendInitialEvents", in: inQuery, typ: tBool},
		{name: "timeoutSeconds", in: inQuery, typ: tInt},
		{name: "watch", in: inQuery, typ: tBool},
	}
	// writeParams are the query parameters of create and update;
	// fieldValidation on PATCH is what kubectl looks for before it trusts
	// server-side validation.
	writeParams = []param{
		{name: "dryRun", in: inQuery, typ: tString},
		{name: "fieldManager", in: inQuery, typ: tString},
		{name: "fieldValidation", in: inQuery, typ: tString},
	}
	paramForce = param{name: "force", in: inQuery, typ: tBool}
	// deleteParams are the query parameters of delete.
	deleteParams = []param{
		{name: "dryRun", in: inQuery, typ: tString},
		{name: "gracePeriodSeconds", in: inQuery, typ: tInt},
		{name: "ignoreStoreReadErrorWithClusterBreakingPotential", in: inQuery, typ: tBool},
		{name: "orphanDependents", in: inQuery, typ: tBool},
		{name: "propagationPolicy", in: inQuery, typ: tString},
	}
)

// joinParams concatenates groups of parameters and sorts them by name, the
// order the documents list them in.
func joinParams(groups ...[]param) []param {
	var out []param
	for _, g := range groups {
		out = append(out, g...)
	}
	slices.SortStableFunc(out, func(a, b param) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	return out
}

// deleteCollectionParams are delete's parameters plus list's selection
// parameters (no watch).
func deleteCollectionParams() []param {
	var sel []param
	for _, p := range listParams {
		if p.name != "watch" && p.name != "allowWatchBookmarks" {
			sel = append(sel, p)
		}
	}
	return joinParams(deleteParams, sel)
}
