// Package cel compiles and evaluates the CEL validation rules a
// CustomResourceDefinition's schema declares (x-kubernetes-validations),
// as upstream's v1.32 API server does.
//
// At CRD write time, Compile(schema, path) checks every rule of the
// schema and compiles it in the v1.32 environment (standard library with
// cross-type numeric comparisons and optionals; cel-go's strings (v2),
// sets and two-variable comprehensions; and this package's lists, regex,
// URL, quantity, IP, CIDR and named-format libraries, written from
// upstream's documented behaviour). It refuses malformed rules, compile
// errors, unsupported reasons, invalid fieldPaths, oldSelf where old
// values cannot be correlated, and rules whose estimated cost is over
// budget, with upstream's texts and field paths. The returned *Validator
// is immutable and safe for concurrent use.
//
// At custom resource write time, (*Validator).Validate(ctx, obj, old)
// evaluates the rules against the decoded object (old is the stored
// object on update, nil on create) and returns the failures as field
// errors, again with upstream's texts.
//
// How a schema node looks to a rule (self, and oldSelf in transition
// rules): an object with properties is a CEL object type whose fields are
// the properties, named with upstream's escaping (see Escape); a map
// (additionalProperties) is map(string, V); an array is list(V), with
// set and map lists comparing without order; x-kubernetes-int-or-string
// is dyn; strings of format byte, duration, date and date-time are bytes,
// duration and timestamp. At a resource root (and an embedded resource's)
// apiVersion, kind and metadata.name/generateName are always readable.
// Nodes without a type (preserve-unknown-fields alone) are not readable
// and cannot carry rules.
//
// Costs: each rule's estimated cost, multiplied by how many times it can
// run in one object (the product of the enclosing maxItems and
// maxProperties, or else what fits in a 3 MiB request), must stay under
// StaticEstimatedCostLimit, and all rules of a schema under
// StaticEstimatedCRDCostLimit. At run time one rule may cost PerCallLimit
// and all rules of one object RuntimeCostBudget.
//
// Admission objects (ValidatingAdmissionPolicy, webhook match
// conditions) have their expressions type-checked at write time by an
// AdmissionCompiler, which also builds the programs of the policies
// enforced (AdmissionProgram, evaluated by an AdmissionEvaluation with
// lazily evaluated variables, a shared budget and the authorizer
// library's checks), in upstream's admission environment: object,
// oldObject and params dyn, request and namespaceObject typed, the
// authorizer library, and variables composed in order. New expressions
// compile as of v1.32's compatibility version (v1.31, without
// two-variable comprehensions), those already stored in the full v1.32
// environment. The environments are built on first use.
//
// PolicyTypeCheck checks a policy's expressions again with object and
// oldObject typed by the schema of a resource the policy matches (and
// params by its paramKind's), for the warnings of the policy's status.
//
// Known limit: cel-go v0.31's runtime cost tracker slows quadratically
// with a comprehension's length (20,000 items take about a second), so
// Validate also stops after maxValidateTime, reporting the budget spent.
package cel
