// Package registry holds the descriptors of the served resource types and
// the lookup the REST layer, discovery and OpenAPI derive everything from.
package registry

import (
	"context"
	"time"

	"platd/server/apierr"
	"platd/server/schema"
	"slices"
)

// Verb names as discovery lists them.
const (
	VerbCreate           = "create"
	VerbDelete           = "delete"
	VerbDeleteCollection = "deletecollection"
	VerbGet              = "get"
	VerbList             = "list"
	VerbPatch            = "patch"
	VerbUpdate           = "update"
	VerbWatch            = "watch"
)

// ObjectVerbs returns the verbs of an ordinary stored resource, sorted as
// discovery lists them.
func ObjectVerbs() []string {
	return []string{VerbCreate, VerbDelete, VerbDeleteCollection, VerbGet, VerbList, VerbPatch, VerbUpdate, VerbWatch}
}

// NameRule says which names a resource accepts.
type NameRule int

const (
	// NameSubdomain is a DNS-1123 subdomain, at most 253 characters.
	NameSubdomain NameRule = iota
	// NameLabel is a DNS-1123 label, at most 63 characters.
	NameLabel
	// NamePathSegment is anything that is a valid path segment.
	NamePathSegment
	// NameDNS1035 is a DNS-1035 label: a DNS-1123 label that starts with a
	// letter (services, whose names become DNS names and environment
	// variables).
	NameDNS1035
)

// Object is a decoded object: generic JSON values keyed by member name.
type Object = map[string]any

// Subresource is a sub-path of an object such as "status".
type Subresource struct {
	Name  string
	Verbs []string
	// Group, Version and Kind name the kind the subresource answers with
	// when it is not the resource's own (autoscaling/v1 Scale, policy/v1
	// Eviction); empty means the resource's kind.
	Group, Version, Kind string
	// Serve says how requests to the subresource are served.
	Serve Serve
	// Copy, for ServeObject subresources that write, moves what a write
	// may change from the written object into next, a copy of the stored
	// object; nil moves status. Unused when Keep is set.
	Copy func(next, written Object)
	// Keep, when set, makes a write through the subresource write the
	// whole object as an update of the resource does (its metadata
	// included), except the members at these dotted paths, which keep
	// their stored values: upstream's status strategies of built-in
	// types reset only spec, and some also labels or owner references.
	Keep []string
	// Scale locates the replica counts of a ServeScale subresource.
	Scale *ScalePaths
	// Table is how the kind a subresource answers with prints as a Table
	// when that is not the resource's own (a Scale's replica columns);
	// nil prints the default columns.
	Table *Table
	// Validate, when set, checks a write through the subresource in
	// place of the type's ValidateUpdate.
	Validate func(obj, old Object) apierr.FieldErrors
	// RequireResourceVersion refuses a write whose object names no
	// resourceVersion, as a validation error (the status of volumes,
	// claims and quotas upstream).
	RequireResourceVersion bool
	// Proxy marks a proxy subresource: a path may follow its name, and the
	// object's name in the URL may carry a scheme and a port
	// ("https:web:443"), as upstream's proxies take them.
	Proxy bool
	// Default sets the defaults of the answered kind a schema cannot say
	// (a TokenRequest's expirationSeconds), before the ownership of the
	// request's fields is recorded, as upstream's decoder sets them.
	Default func(obj Object)
	// Answer serves creates of a ServeAnswer subresource (a service
	// account's token); it is given the parent object.
	Answer Answer
	// Connect lists the HTTP methods of a subresource that connects the
	// client to a stream or a proxied server (upstream's connecters: exec,
	// attach, port forwarding, proxies), as upstream documents them; Kind
	// is then its options kind. The documents describe such a
	// subresource's operations as connects answering any media type.
	Connect []string
	// Query are the query parameters the subresource takes, the members
	// of its options kind as upstream's routes list them.
	Query []QueryParam
	// Text marks a subresource answering a text stream (a pod's log):
	// documented as a string, in text/plain too.
	Text bool
	// AlsoAccepts are earlier apiVersions of Kind, of the same shape, that
	// a request body may be in ("policy/v1beta1" Evictions), as upstream
	// accepts them; it is decoded as Kind.
	AlsoAccepts []string
	// Budgets, for a ServeEvict subresource, is the resource whose objects
	// in the pod's namespace budget its disruption (PodDisruptionBudgets);
	// nil evicts without consulting any.
	Budgets *Descriptor
}

// QueryParam is one query parameter of a subresource: its name and its
// OpenAPI type (string, integer or boolean; a list member takes its
// items' type, as upstream documents it).
type QueryParam struct {
	Name, Type string
	// List says the member of the options kind is a list (a connect's
	// command or ports): every value of the parameter is an item.
	List bool
}

// HTTP methods of connect subresources.
const (
	ConnectGet     = "GET"
	ConnectPost    = "POST"
	ConnectPut     = "PUT"
	ConnectPatch   = "PATCH"
	ConnectDelete  = "DELETE"
	ConnectHead    = "HEAD"
	ConnectOptions = "OPTIONS"
)

// ProxyMethods are the methods a proxy subresource connects.
func ProxyMethods() []string {
	return []string{ConnectDelete, ConnectGet, ConnectHead, ConnectOptions, ConnectPatch, ConnectPost, ConnectPut}
}

// Serve is how a subresource (or a resource without stored objects) is
// served.
type Serve int

const (
	// ServeObject reads the object and writes the parts Copy moves.
	ServeObject Serve = iota
	// ServeScale reads and writes the replica count as an autoscaling/v1
	// Scale.
	ServeScale
	// ServeBind assigns a pod to a node from a Binding.
	ServeBind
	// ServeEvict deletes a pod from an Eviction.
	ServeEvict
	// ServeNoNode answers that the request needs a node, which platd does
	// not run (logs, exec, attach, port forwarding, proxies).
	ServeNoNode
	// ServeAnswer serves a create whose object is not stored but answered
	// by the Answer hook of the resource or subresource (reviews, token
	// requests). See Answer for the contract.
	ServeAnswer
)

// Answer computes the reply to a create of a resource or subresource served
// with ServeAnswer. Nothing is stored: the REST layer does everything else.
//
// Before the hook runs, the REST layer has:
//   - parsed the create options (dryRun, fieldValidation, fieldManager) and
//     refused bad ones with 422;
//   - decoded the body as the answering kind (the descriptor's Kind, or the
//     subresource's Group/Version/Kind), with its schema's defaults applied,
//     unknown and duplicate fields refused or warned per fieldValidation,
//     and kind and apiVersion set; ownership of the fields sent is recorded
//     in metadata.managedFields, as upstream records it on any create;
//   - for a subresource, read the addressed object from storage into
//     AnswerRequest.Parent, answering 404 (NotFound of the parent resource)
//     when it is missing.
//
// The hook returns the object to answer with, of the answering kind: the
// request object with its status filled (TokenReview, TokenRequest: the
// managedFields then show), or a new object (SelfSubjectReview). It is
// encoded in the negotiated media type with code 201. An error is answered
// as its Status (use apierr constructors; another error is a 500). A hook
// must honour DryRun itself when its answer has effects; one without effects
// answers the same either way, as upstream's reviews do. Hooks are called
// concurrently and must not keep req.Object or req.Parent.
type Answer func(ctx context.Context, req AnswerRequest) (Object, error)

// AnswerRequest is what an Answer hook is given. Its maps are owned by the
// hook for the duration of the call.
type AnswerRequest struct {
	// Who made the request; the zero value when the request carries no
	// user (the server's own in-process calls).
	Who Requester
	// HasUser is false when the request carries no user at all.
	HasUser bool
	// Namespace and Name are the URL's: for a subresource the parent's.
	Namespace, Name string
	// Parent is the stored object a subresource addresses, decoded; nil
	// for a resource.
	Parent Object
	// Object is the decoded request body.
	Object Object
	// DryRun is set when the request asked for dryRun=All.
	DryRun bool
}

// ScalePaths are the dotted JSON paths of a scale subresource's fields in
// the object.
type ScalePaths struct {
	// SpecReplicas is the desired count, StatusReplicas the observed one.
	SpecReplicas, StatusReplicas string
	// LabelSelector is the selector of the scaled pods, rendered into the
	// Scale's status.selector as a string: a label selector object, a map
	// of labels when SelectorIsSet (replication controllers), or a string
	// already.
	LabelSelector string
	SelectorIsSet bool
	// CheckUID refuses a patch whose Scale names another uid than the
	// object's, as a Conflict on "<resource>/scale" in the resource's
	// group (upstream's built-in scale storages; a custom resource's
	// ignores it). A PUT's uid is a precondition of every update.
	CheckUID bool
	// NotFoundAsScale answers a read of a missing object with a NotFound
	// of "<resource>/scale" in the autoscaling group rather than of the
	// resource (upstream's replication controllers).
	NotFoundAsScale bool
}

// Descriptor is everything the server knows about one resource type in one
// version. It is immutable once registered.
type Descriptor struct {
	// Group is the full group name ("" for core), Version its version.
	Group, Version string
	// Kind and ListKind are the object and list kinds.
	Kind, ListKind string
	// Resource is the plural path segment, Singular its singular name.
	Resource, Singular string
	Namespaced         bool
	// IsNamespace marks the resource whose objects are the namespaces
	// other objects live in: its path's namespace segment names the
	// object, and namespaced writes check it.
	IsNamespace bool
	ShortNames  []string
	Categories  []string
	// Verbs are the verbs of the main resource, sorted.
	Verbs []string
	// ListedVerbs, when set, are the verbs discovery lists for the main
	// resource in place of Verbs, which still decide what is served: a
	// terminating CRD's resources are listed with delete,
	// deletecollection, get, list and watch alone, as upstream lists
	// them, while their objects may still be updated and patched.
	ListedVerbs []string
	// ListedAsGiven makes discovery list the verbs and the subresources
	// in the order the descriptor gives them, as upstream lists a custom
	// resource's; built-in types are listed sorted.
	ListedAsGiven bool
	Subresources  []Subresource
	// Schema describes the object.
	Schema *schema.Schema
	// NameRule validates metadata.name.
	NameRule NameRule
	// NameRuleCreateOnly applies NameRule on create only: an update
	// checks the name as a path segment, the rule upstream's generic
	// update applies to every kind (the events group's, whose events may
	// have been created through the core group with any such name).
	NameRuleCreateOnly bool
	// SchemaValidation applies the schema's required, enum and list
	// rules on write. Built-in types leave it off: their OpenAPI markers
	// document the Go types (a field without omitempty reads "required"),
	// and upstream validates them with per-type code, the Strategy here.
	SchemaValidation bool
	// UpdateCreates lets PUT create a missing object.
	UpdateCreates bool
	// UpdateRequiresResourceVersion refuses a PUT of an existing object
	// that does not name the resourceVersion it replaces.
	UpdateRequiresResourceVersion bool
	// ReturnDeleted makes DELETE answer with the removed object instead of
	// a Success Status (upstream's stores that return the deleted object;
	// the OpenAPI documents then name the kind as DELETE's answer).
	ReturnDeleted bool
	// DeleteDocumentedAsStatus documents DELETE as answering a Status even
	// with ReturnDeleted: upstream's namespace storage wraps its store's
	// delete (to finalize), which hides from the route builder that the
	// removed object is answered, so its documents name Status.
	DeleteDocumentedAsStatus bool
	// FieldSelectors are the selectable fields beyond metadata.name and
	// metadata.namespace, by name.
	FieldSelectors map[string]FieldSelector
	// FieldLabels says which labels a field selector may name and how
	// others are refused.
	FieldLabels FieldLabels
	// Strategy holds the per-type rules a schema cannot say.
	Strategy Strategy
	// Table is how objects print as a Table; nil prints the default
	// columns.
	Table *Table
	// Storage is set when objects are stored in another version's form:
	// one stored object is then served in several versions. Its
	// conversions keep the metadata as it is: label selectors and
	// metadata lists read it from the stored form.
	Storage *Storage
	// Serve, for a resource whose objects are not stored, says what
	// creating one does (bindings bind pods); ServeObject for every stored
	// resource.
	Serve Serve
	// Answer serves creates of a ServeAnswer resource (reviews).
	Answer Answer
	// Acts, for a resource whose objects are not stored, is the resource
	// whose objects creating one changes (bindings bind pods).
	Acts *Descriptor
	// Computed, for a read-only resource whose objects are not stored,
	// returns them (component statuses). storage probes the server's
	// storage, so that what is reported is checked at the time of the
	// request.
	Computed func(ctx context.Context, storage Probe) []Object
	// DeprecatedIn, when set, is the release ("1.19") since which the kind
	// is deprecated: every request to the resource then carries upstream's
	// deprecation warning.
	DeprecatedIn string
	// RemovedIn, when set with DeprecatedIn, is the release ("1.25") that
	// no longer serves the kind: the warning says so, and it is the
	// removed_release of apiserver_requested_deprecated_apis and of the
	// removed-release audit annotation.
	RemovedIn string
	// Deprecation, when set, is the Warning every request to the resource
	// carries, worded in full (a custom resource version's
	// deprecationWarning); DeprecatedIn words it for built-in kinds.
	Deprecation string
	// AnyFinalizerNames accepts any qualified name as a finalizer: the
	// apiextensions types are not validated with the core API's rule that
	// a name without a "/" be a standard one (custom resources are only
	// warned, by their Warnings hook).
	AnyFinalizerNames bool
	// CurrentSince, when positive, is the revision from which every
	// stored object conforms to its stored form's schema: an older one
	// (written before its CRD changed) is pruned and defaulted by the
	// current schema as it is read, as upstream prunes and defaults custom
	// resources read from storage.
	CurrentSince int64
	// RefuseCreate, when set, answers every create with 405 and this
	// message: the resources of a CRD being deleted take no new objects.
	RefuseCreate string
	// NoStrategicMergePatch refuses strategic merge patches with 415: the
	// type declares no patch strategies (custom resources).
	NoStrategicMergePatch bool
	// QualifiedResponseKinds makes aggregated discovery name the group and
	// version of the resource's response kind, and of its subresources',
	// even where they are the resource's own: upstream lists custom
	// resources so, while built-in ones leave them empty.
	QualifiedResponseKinds bool
	// ListItemsTyped gives every item of a list its kind and apiVersion:
	// upstream keeps custom resources as unstructured objects that carry
	// them, while its typed lists of built-in kinds leave them out.
	ListItemsTyped bool
	// KeepStatusOnCreate keeps the status a create sends; by default a
	// resource with a status subresource starts with an empty status.
	KeepStatusOnCreate bool
	// NoGarbageCollection leaves the objects out of the garbage
	// collector's graph, as upstream leaves out events: they are many,
	// short-lived and expire on their own (ExpiresAfterWrite).
	NoGarbageCollection bool
	// ExpiresAfterWrite removes each object one --event-ttl after its
	// last write, as upstream stores events with an etcd lease of that
	// length (the controllers' Expiry does it). Descriptors that share a
	// stored form share its expiry.
	ExpiresAfterWrite bool
	// SameNameDependents are resources whose object of the same namespace
	// and name is removed with an object of this one, in the same storage
	// transaction (a service's Endpoints, as upstream), unless finalizers
	// keep it.
	SameNameDependents []*Descriptor
	// Quota measures what the objects use of the resources a
	// ResourceQuota limits; nil counts them (count/<resource>.<group>),
	// as upstream counts the objects of every resource it has no
	// evaluator for.
	Quota QuotaEvaluator
	// IsQuota marks the resource whose objects are the ResourceQuotas
	// that admission charges writes to.
	IsQuota bool
}

// QuotaEvaluator measures what objects of one type use of the resources a
// ResourceQuota limits (server/quota holds upstream's evaluators). Its
// methods may be called concurrently and do not change their arguments.
type QuotaEvaluator interface {
	// MatchingResources returns those of names (resource names a quota
	// limits) the type's usage may charge, in the order of names.
	MatchingResources(names []string) []string
	// Usage returns what obj uses, by resource name, each amount spelled
	// as objects spell quantities. now decides whether an object whose
	// deletion grace has run out is still charged.
	Usage(obj Object, now time.Time) map[string]string
	// MatchesScope reports whether obj falls in a quota's scope
	// requirement; a type without scopes matches none.
	MatchesScope(req ScopeRequirement, obj Object) bool
	// Constraints returns why obj may not be charged to a quota limiting
	// required, "" when it may.
	Constraints(required []string, obj Object) string
	// ChargesUpdates reports whether updates of the main resource are
	// charged (by the change in usage) as creates are.
	ChargesUpdates() bool
}

// ScopeRequirement is one scope of a ResourceQuota: a spec.scopes entry
// (operator Exists) or a spec.scopeSelector match expression.
type ScopeRequirement struct {
	ScopeName, Operator string
	Values              []string
}

// Probe checks that a part of the server works: nil when it does, else
// what is wrong. It may be called concurrently and returns promptly.
type Probe func(ctx context.Context) error

// Storage describes where a descriptor's objects are stored when that is
// another version's form, and how to convert between the two.
type Storage struct {
	// Descriptor is the stored form: its schema encodes the stored bytes
	// and its resource names the key prefix. It need not be served.
	Descriptor *Descriptor
	// ToStorage converts an object of the served version to the stored
	// form, FromStorage the other way. Both may modify their argument and
	// return it, or return a new object. They are nil when Converter is
	// set.
	ToStorage, FromStorage func(obj Object) Object
	// Converter, when set, converts instead of ToStorage and FromStorage:
	// for types whose conversion is made elsewhere and can fail (a custom
	// resource's conversion webhook). Objects of such a type keep the
	// version they were written in: the stored bytes name it (see
	// Unversioned for those that do not), are decoded with
	// that version's schema and converted from it on every read, until
	// rewritten. Descriptor's own objects then share no fast path with
	// stored bytes either: every served version of the type has a
	// Storage with the same Converter.
	Converter Converter
	// Unversioned is the version (a version name of the type's group)
	// of a Converter's stored bytes that name none: those written before
	// every object of the type named its own. Empty, they are of
	// Descriptor's version.
	Unversioned string
	// NoVersionHash leaves the storage version hash out of discovery:
	// upstream publishes a custom resource's only while its storage
	// version is served.
	NoVersionHash bool
}

// Converter converts the objects of one type between its versions. Objects
// given carry their apiVersion and kind, and are the caller's: a
// converter may modify them and return them. An object already of the
// desired apiVersion is returned as it is, without a call. Errors are
// the request's answer (a Status error when the converter has one).
// Methods are safe for concurrent use.
type Converter interface {
	// Schema is the schema objects stored in version (a version name of
	// the type's group, "v1") decode with; nil when the type has no such
	// version any more.
	Schema(version string) *schema.Schema
	// Convert converts one object to apiVersion ("<group>/<version>").
	Convert(ctx context.Context, obj Object, apiVersion string) (Object, error)
	// ConvertList converts the items of a list to apiVersion, all in one
	// exchange; the result has one object per item, in order.
	ConvertList(ctx context.Context, items []Object, apiVersion string) ([]Object, error)
}

// Strategy is the per-type behaviour. Every hook is optional.
type Strategy struct {
	// Default sets the defaults a schema cannot say (those that depend on
	// other fields), on every object a create, update or patch writes,
	// before the Prepare hooks. The schema's own defaults are applied
	// after it.
	Default func(obj Object)
	// PrepareForCreate normalises a new object before validation (set
	// status, defaults that are code, drop write-only fields).
	PrepareForCreate func(obj Object)
	// StampRequester records who creates an object, for types whose spec
	// names its requester (certificate signing requests); it runs after
	// PrepareForCreate with the authenticated user, and not at all for
	// the server's own writes.
	StampRequester func(obj Object, who Requester)
	// AuthorizeWrite checks that who may write obj beyond being allowed
	// the verb: a role or binding may grant only what its writer holds
	// (old is nil on create). name is the object name the request
	// addressed, "" for a POST. It runs for every create and every update
	// of the main resource (PUT, patch, apply) made for a user, after
	// defaulting and before validation; the server's own writes, made
	// without a user, skip it. Its error is the request's answer.
	AuthorizeWrite func(ctx context.Context, who Requester, name string, obj, old Object) error
	// AdmitRequester is the type's validating admission: it checks a write made
	// for a user once the write has passed validation, and its error is
	// the request's answer. It runs for creates (old is nil), updates of
	// the main resource (subresource "") and writes through a subresource
	// (named by subresource), dry runs included, with obj the new state
	// and old the stored one. The server's own writes, made without a
	// user, skip it.
	AdmitRequester func(ctx context.Context, who Requester, subresource string, obj, old Object) error
	// Admit is the type's admission that reads other objects through l
	// and may change obj (a pod's priority from its class), as upstream's
	// mutating admission plugins: old is nil on create. It runs for every
	// create and every update of the main resource, dry runs and the
	// server's own writes included, after AuthorizeWrite and before
	// validation. A *Denial refuses the write with 403; any other error is
	// the request's answer as it is.
	Admit func(ctx context.Context, l Lookup, obj, old Object) error
	// ValidateAdmission is the type's admission that checks obj against
	// other objects read through l (only one default priority class), as
	// upstream's validating admission plugins: it runs for the writes Admit
	// runs for, once obj is valid, and does not change it. Its errors are
	// answered as Admit's; what it passes to security.AddWarning on ctx is
	// answered as Warning headers, with or without an error.
	ValidateAdmission func(ctx context.Context, l Lookup, obj, old Object) error
	// AdmissionSteps are the type's admission plugins' steps, in
	// upstream's order of the plugins: ComposeAdmission builds Admit and
	// ValidateAdmission from those of the enabled plugins.
	AdmissionSteps []AdmissionStep
	// ValidateSubresourceAdmission is, per subresource, the validating
	// admission of the updates written through it (upstream's plugins
	// that review pods/ephemeralcontainers): built by ComposeAdmission
	// from the steps naming the subresource, it runs where
	// ValidateAdmission runs for the main resource, with obj the whole
	// new state.
	ValidateSubresourceAdmission map[string]AdmissionHook
	// NoPolicyAdmission exempts the type's writes from the
	// ValidatingAdmissionPolicies, as upstream exempts the policies and
	// their bindings themselves.
	NoPolicyAdmission bool
	// NoWebhookAdmission exempts the type's writes from the admission
	// webhooks, as upstream exempts the webhook configurations and the
	// admission policies and their bindings.
	NoWebhookAdmission bool
	// PrepareForUpdate normalises obj, the new state, given the stored old
	// state and the subresource written ("" or "status").
	PrepareForUpdate func(obj, old Object, subresource string)
	// Validate checks a new object beyond its schema, and a changed one
	// when ValidateUpdate is not set.
	Validate func(obj Object) apierr.FieldErrors
	// ValidateUpdate checks a change in place of Validate; it includes the
	// rules of Validate that apply to updates, in upstream's order.
	ValidateUpdate func(obj, old Object) apierr.FieldErrors
	// ValidateCreate checks a new object in place of Validate for a kind
	// whose upstream validation does not start with the metadata's: it
	// is given the errors of the checks every kind shares (the metadata's)
	// and returns the create's errors with those placed as upstream
	// places them.
	ValidateCreate func(obj Object, shared apierr.FieldErrors) apierr.FieldErrors
	// PendingFinalizers reports finalizers beyond metadata.finalizers that
	// keep a deleted object (a namespace's spec.finalizers).
	PendingFinalizers func(obj Object) bool
	// PrepareForDelete changes an object whose deletion starts, before it
	// is written with its deletionTimestamp (a namespace's phase).
	PrepareForDelete func(obj Object)
	// Settle, when set, runs once a write of an object is durable and
	// before it is answered, with the write's revision: it waits until
	// what the server serves reflects the write (a CRD's resources served,
	// changed or gone), so the client's next request sees it.
	Settle func(ctx context.Context, revision int64)
	// Graceful makes DELETE only mark the object, whatever its finalizers.
	Graceful bool
	// MarkWithoutGrace makes the first DELETE set deletionTimestamp alone,
	// with no deletionGracePeriodSeconds: a namespace's deletion is marked
	// by its own write, not by the generic store's.
	MarkWithoutGrace bool
	// DeleteGrace returns the grace period of a deletion, given the grace
	// period the request asked for (nil when none): 0 deletes at once,
	// more marks the object with deletionTimestamp that far in the future
	// and keeps it until then.
	DeleteGrace func(obj Object, requested *int64) int64
	// OrphanByDefault makes a deletion without a propagation policy orphan
	// the object's dependents (replication controllers in core v1, for
	// backward compatibility) instead of deleting them in the background.
	OrphanByDefault bool
	// OrphanWarning, for a type that orphans by default, is the Warning a
	// deletion that names no propagation policy is answered with: batch/v1
	// jobs keep their pods that way, which surprises.
	OrphanWarning string
	// ForbidDelete returns why the object called name may not be deleted,
	// or "" when it may.
	ForbidDelete func(name string) string
	// ForbidDeletePlugin is the upstream admission plugin ForbidDelete is,
	// when one is: while that plugin is off, ForbidDelete is not asked.
	ForbidDeletePlugin string
	// DeletingConflict is the Conflict message of a DELETE of a graceful
	// object whose PendingFinalizers still hold it.
	DeletingConflict string
	// Warnings returns the warnings a write of obj earns (old is nil on
	// create), as upstream's WarningsOnCreate and WarningsOnUpdate: they
	// are sent after the Prepare hooks ran, whether or not the write
	// succeeds.
	Warnings func(obj, old Object) []string
	// Claims returns the values obj holds that no other object may hold
	// at the same time (a service's cluster IPs and node ports). Each is
	// recorded under its own key, written in the same storage transaction
	// as the object: a create or update adds the object's new claims and
	// drops those it gave up, a removal drops them all, and a claim another
	// object holds fails the write. So no value is ever held twice, and a
	// crash can neither leak one nor lose one.
	Claims func(obj Object) []Claim
	// Allocate fills in the claimed values a new or changed object needs
	// (old is nil on create) and checks the ones it asks for; free reports
	// whether a value is free for obj (unclaimed, or held by old). Field
	// errors are refused as Invalid; an API error is answered as it is,
	// another error as a 500 with its own text, as upstream answers an
	// allocator's plain error.
	// It runs after the Prepare hooks and before validation, as upstream
	// allocates, and again from the request's object when a value it chose
	// was taken by a concurrent write. Subresource writes do not run it.
	Allocate func(obj, old Object, free func(Claim) bool) (apierr.FieldErrors, error)
}

// Claim is one value held exclusively, in a named pool of values.
type Claim struct {
	// Pool names the value space ("serviceips"); Value is the value in
	// its canonical text form.
	Pool, Value string
}

// Requester is the authenticated user a request is made by.
type Requester struct {
	Name, UID string
	Groups    []string
	Extra     map[string][]string
}

// GroupVersion is "group/version", or "version" for the core group.
func (d *Descriptor) GroupVersion() string {
	if d.Group == "" {
		return d.Version
	}
	return d.Group + "/" + d.Version
}

// GroupResource is the "<resource>[.<group>]" string error messages use.
func (d *Descriptor) GroupResource() string {
	if d.Group == "" {
		return d.Resource
	}
	return d.Resource + "." + d.Group
}

// GroupKind is the "<Kind>[.<group>]" string Invalid errors use.
func (d *Descriptor) GroupKind() string {
	if d.Group == "" {
		return d.Kind
	}
	return d.Kind + "." + d.Group
}

// Stored reports whether the resource's objects are kept in storage: not
// for a resource whose creates only act (bindings) or whose objects are
// computed (component statuses).
func (d *Descriptor) Stored() bool { return d.Serve == ServeObject && d.Computed == nil }

// HasVerb reports whether the main resource supports verb.
func (d *Descriptor) HasVerb(verb string) bool { return slices.Contains(d.Verbs, verb) }

// Subresource returns the named subresource, or nil.
func (d *Descriptor) Subresource(name string) *Subresource {
	for i := range d.Subresources {
		if d.Subresources[i].Name == name {
			return &d.Subresources[i]
		}
	}
	return nil
}

// FieldLabels is how a kind reads the labels of a field selector, as
// upstream's field-label conversion for the kind. The zero value is the
// conversion of a kind that has none of its own: metadata.name and
// metadata.namespace are accepted, FieldSelectors are not consulted, and
// any other label is refused as not a known field selector.
type FieldLabels struct {
	// Refusal, when set, marks a kind with its own conversion and words
	// the refusal of a label it does not accept, its one verb taking the
	// label. The kind then accepts metadata.name, metadata.namespace when
	// it is namespaced, its FieldSelectors, Empty and the keys of Aliases.
	Refusal string
	// Empty are labels accepted with no field behind them: every object
	// reads the empty value there.
	Empty []string
	// Aliases map labels kept for older clients to the labels they stand
	// for.
	Aliases map[string]string
}

// FieldLabelNotSupported is the refusal of the core group's conversions
// and of most others.
const FieldLabelNotSupported = "field label not supported: %s"

// FieldSelector reads one selectable field of an object.
type FieldSelector struct {
	// Get returns the field's value as a field selector compares it.
	Get func(Object) string
	// Reads are the paths Get reads (each read whole): objects are then
	// selected on from those parts only, the rest of a stored object
	// skipped. nil when not declared: whole objects are decoded.
	Reads [][]string
}
