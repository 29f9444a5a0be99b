package config

import (
	"fmt"
	"strings"
)

// Brand holds every brand-bearing identifier the server emits or accepts.
// One Brand is chosen at start-up; no other file spells either brand's
// strings, so switching brands can never leave a stray literal behind.
type Brand struct {
	// Name is the value of --brand.
	Name string
	// Domain is the suffix of API group names ("plat.io" / "k8s.io").
	Domain string
	// LongDomain prefixes labels, annotations and secret types
	// ("plat.io" / "kubernetes.io").
	LongDomain string
	// SystemNamespace, PublicNamespace and NodeLeaseNamespace exist from
	// the first start and the first two cannot be deleted.
	SystemNamespace    string
	PublicNamespace    string
	NodeLeaseNamespace string
	// NamespaceFinalizer is the spec.finalizers entry every namespace gets.
	NamespaceFinalizer string
	// ProtobufMediaType is the media type of the protobuf envelope.
	ProtobufMediaType string
	// ExecInfoEnv is the environment variable exec credential plugins read.
	ExecInfoEnv string
	// ClusterName is the name written into generated kubeconfigs.
	ClusterName string
	// RootCAConfigMap is the ConfigMap every namespace gets that holds the
	// CA bundle verifying the server; RootCADescription is the value of
	// its description annotation.
	RootCAConfigMap   string
	RootCADescription string
	// APIAccessVolume starts the name of the projected volume a pod gets
	// for its service account's token, the root CA bundle and its
	// namespace (a random suffix follows).
	APIAccessVolume string
	// APIServiceName names the Service (and its Endpoints and
	// EndpointSlice) in the default namespace that points at the API
	// server, and is its "provider" label.
	APIServiceName string
	// FieldManager is the manager name of the server's own writes,
	// ControllerManager that of its controllers'.
	FieldManager, ControllerManager string
	// AutomanagedLabel marks the APIServices the server creates for the
	// groups it serves itself.
	AutomanagedLabel string
	// APIApprovalAnnotation is the annotation a CustomResourceDefinition
	// of one of the brand's own groups must carry, naming where its API
	// was approved; APIApprovalReference ends the refusal of one without
	// it, pointing at the policy.
	APIApprovalAnnotation, APIApprovalReference string
	// LegacyTokenIssuer is the iss claim of secret-based service-account
	// tokens.
	LegacyTokenIssuer string
	// LegacyTokenTrackingConfigMap is the system ConfigMap that records
	// since when legacy service-account tokens are tracked; the default
	// RBAC policy lets the legacy token cleaner read it.
	LegacyTokenTrackingConfigMap string
	// StorageValuePrefix starts every value an encryption provider writes
	// to the data file ("k8s:enc:aesgcm:v1:key1:..."), so a file stays
	// readable by the brand that wrote it.
	StorageValuePrefix string
	// KubectlHint is the Warning sent to kubectl when this brand is not
	// the one kubectl hard-codes (kubectl's own errors name only media
	// types); empty where kubectl works unchanged.
	KubectlHint string
}

// Brands lists the brands --brand accepts.
var Brands = map[string]Brand{
	"plat": {
		Name:                         "plat",
		Domain:                       "plat.io",
		LongDomain:                   "plat.io",
		SystemNamespace:              "plat-system",
		PublicNamespace:              "plat-public",
		NodeLeaseNamespace:           "plat-node-lease",
		NamespaceFinalizer:           "plat",
		ProtobufMediaType:            "application/vnd.plat.protobuf",
		ExecInfoEnv:                  "PLAT_EXEC_INFO",
		ClusterName:                  "platd",
		RootCAConfigMap:              "plat-root-ca.crt",
		APIAccessVolume:              "plat-api-access",
		RootCADescription:            "Holds the CA bundle that verifies platd's serving certificate, for clients inside the cluster. No other use is promised.",
		APIServiceName:               "plat",
		FieldManager:                 "platd",
		ControllerManager:            "platd-controller-manager",
		AutomanagedLabel:             "aggregator.plat.io/automanaged",
		APIApprovalAnnotation:        "api-approved.plat.io",
		LegacyTokenIssuer:            "plat/serviceaccount",
		LegacyTokenTrackingConfigMap: "platd-legacy-service-account-token-tracking",
		StorageValuePrefix:           "plat:enc:",
		KubectlHint: "this platd serves the plat.io spelling of the API (--brand plat), which kubectl does not speak: " +
			"its writes are refused as an unknown format and its tables and discovery fall back; " +
			"to use kubectl, start platd with --brand kubernetes and a new --data-dir",
	},
	"kubernetes": {
		Name:               "kubernetes",
		Domain:             "k8s.io",
		LongDomain:         "kubernetes.io",
		SystemNamespace:    "kube-system",
		PublicNamespace:    "kube-public",
		NodeLeaseNamespace: "kube-node-lease",
		NamespaceFinalizer: "kubernetes",
		ProtobufMediaType:  "application/vnd.kubernetes.protobuf",
		ExecInfoEnv:        "KUBERNETES_EXEC_INFO",
		ClusterName:        "platd",
		RootCAConfigMap:    "kube-root-ca.crt",
		APIAccessVolume:    "kube-api-access",
		RootCADescription: "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
			"No other usage is guaranteed across distributions of Kubernetes clusters.",
		APIServiceName:               "kubernetes",
		FieldManager:                 "kube-apiserver",
		ControllerManager:            "kube-controller-manager",
		AutomanagedLabel:             "kube-aggregator.kubernetes.io/automanaged",
		APIApprovalAnnotation:        "api-approved.kubernetes.io",
		APIApprovalReference:         ", see https://github.com/kubernetes/enhancements/pull/1111",
		LegacyTokenIssuer:            "kubernetes/serviceaccount",
		LegacyTokenTrackingConfigMap: "kube-apiserver-legacy-service-account-token-tracking",
		StorageValuePrefix:           "k8s:enc:",
	},
}

// BrandNames returns the accepted --brand values in a stable order.
func BrandNames() []string { return []string{"plat", "kubernetes"} }

// LookupBrand returns the named brand.
func LookupBrand(name string) (Brand, error) {
	b, ok := Brands[name]
	if !ok {
		return Brand{}, fmt.Errorf("unknown brand %q: must be one of %s", name, strings.Join(BrandNames(), ", "))
	}
	return b, nil
}

// Group returns the full name of a branded API group: Group("rbac.authorization")
// is "rbac.authorization.plat.io" in the plat brand. The empty prefix is the
// bare domain.
func (b Brand) Group(prefix string) string {
	if prefix == "" {
		return b.Domain
	}
	return prefix + "." + b.Domain
}

// MetaGroup is the group of Table, PartialObjectMetadata and the option kinds.
func (b Brand) MetaGroup() string { return b.Group("meta") }

// DiscoveryGroup is the group of aggregated discovery documents.
func (b Brand) DiscoveryGroup() string { return b.Group("apidiscovery") }

// LastAppliedAnnotation is the annotation kubectl's client-side apply
// records the applied configuration in.
func (b Brand) LastAppliedAnnotation() string {
	return "kubectl." + b.LongDomain + "/last-applied-configuration"
}

// Label returns a label or annotation key under the long domain:
// Label("metadata.name") is "plat.io/metadata.name".
func (b Brand) Label(name string) string { return b.LongDomain + "/" + name }

// BootstrappingLabel marks the objects of the default RBAC policy (value
// "rbac-defaults").
func (b Brand) BootstrappingLabel() string { return b.Label("bootstrapping") }

// RBACAutoUpdateAnnotation is the annotation whose value "false" keeps the
// server from reconciling a default RBAC object at start.
func (b Brand) RBACAutoUpdateAnnotation() string {
	return "rbac.authorization." + b.LongDomain + "/autoupdate"
}

// RBACAggregateLabel is the label that adds a cluster role's rules to the
// named default aggregated role ("admin", "edit", "view").
func (b Brand) RBACAggregateLabel(to string) string {
	return b.Group("rbac.authorization") + "/aggregate-to-" + to
}

// ABACGroup is the API group of versioned ABAC policy lines
// (--authorization-policy-file).
func (b Brand) ABACGroup() string { return "abac.authorization." + b.LongDomain }

// ServiceAccountMountPath is where a pod's containers find their service
// account's token, the root CA bundle and their namespace.
func (b Brand) ServiceAccountMountPath() string {
	return "/var/run/secrets/" + b.LongDomain + "/serviceaccount"
}

// BootstrapTokenType is the type of bootstrap token secrets.
func (b Brand) BootstrapTokenType() string { return "bootstrap." + b.LongDomain + "/token" }

// DomainLabel returns a key under the short domain:
// DomainLabel("initial-events-end") is "plat.io/initial-events-end".
func (b Brand) DomainLabel(name string) string { return b.Domain + "/" + name }

// Unbrand maps a group name that ends in this brand's domain back to its
// brand-free prefix and reports whether it did.
func (b Brand) Unbrand(group string) (string, bool) {
	if group == b.Domain {
		return "", true
	}
	if p, ok := strings.CutSuffix(group, "."+b.Domain); ok {
		return p, true
	}
	return group, false
}

// UpstreamDomain is the short domain of the upstream spellings, used only to
// translate the upstream schema documents at generation time.
func UpstreamDomain() string { return Brands["kubernetes"].Domain }
