package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Names of the in-process controllers, as --controllers takes them (the
// spellings of upstream's controller manager where it has the controller).
const (
	ControllerNamespace        = "namespace-controller"
	ControllerServiceAccount   = "serviceaccount-controller"
	ControllerRootCA           = "root-ca-certificate-publisher-controller"
	ControllerGarbageCollector = "garbage-collector-controller"
	// ControllerDeletionGrace removes objects whose deletion grace period
	// ran out; upstream's kubelet does that for pods.
	ControllerDeletionGrace = "deletion-grace-controller"
	// ControllerClaimProtection and ControllerVolumeProtection release the
	// protection finalizers of deleted claims and volumes nothing uses, and
	// give them back to live ones that lack them.
	ControllerClaimProtection  = "persistentvolumeclaim-protection-controller"
	ControllerVolumeProtection = "persistentvolume-protection-controller"
	// ControllerServiceAccountToken fills legacy service-account token
	// secrets.
	ControllerServiceAccountToken = "serviceaccount-token-controller"
	// ControllerClusterRoleAggregation fills aggregated cluster roles.
	ControllerClusterRoleAggregation = "clusterrole-aggregation-controller"
	// ControllerResourceQuota keeps the status (hard limits and usage) of
	// resource quotas.
	ControllerResourceQuota = "resourcequota-controller"
	// ControllerPolicyStatus type-checks the expressions of validating
	// admission policies against the resources they match and records
	// the warnings in their status.
	ControllerPolicyStatus = "validatingadmissionpolicy-status-controller"
	// ControllerCSRSigning issues the certificates of approved signing
	// requests to the signers of kubelets and API clients with the CA.
	ControllerCSRSigning = "certificatesigningrequest-signing-controller"
	// ControllerCSRApproving approves kubelets' client certificate
	// requests their requesters may have.
	ControllerCSRApproving = "certificatesigningrequest-approving-controller"
	// ControllerCSRCleaner deletes signing requests an hour after their
	// decision, a day after their creation while pending, or once their
	// certificate expired.
	ControllerCSRCleaner = "certificatesigningrequest-cleaner-controller"
	// ControllerEndpointSliceMirroring mirrors the Endpoints of services
	// without a selector to EndpointSlices.
	ControllerEndpointSliceMirroring = "endpointslice-mirroring-controller"
)

// DefaultClusterSigningDuration is upstream's --cluster-signing-duration:
// a certificate issued for a signing request is valid for a year at most.
const DefaultClusterSigningDuration = 365 * 24 * time.Hour

// ControllerNames lists every controller; all run by default.
func ControllerNames() []string {
	return []string{ControllerNamespace, ControllerServiceAccount, ControllerRootCA, ControllerGarbageCollector, ControllerDeletionGrace,
		ControllerClaimProtection, ControllerVolumeProtection, ControllerBootstrapSigner, ControllerTokenCleaner, ControllerServiceAccountToken,
		ControllerClusterRoleAggregation, ControllerResourceQuota, ControllerPolicyStatus, ControllerCSRSigning, ControllerCSRApproving, ControllerCSRCleaner,
		ControllerEndpointSliceMirroring}
}

// parseControllers checks --controllers entries: "*" (every controller),
// "name" or "-name".
func parseControllers(list []string) []string {
	var problems []string
	for _, c := range list {
		if c == "*" {
			continue
		}
		if !slices.Contains(ControllerNames(), strings.TrimPrefix(c, "-")) {
			problems = append(problems, fmt.Sprintf("unknown controller %q: known controllers are %s", c, strings.Join(ControllerNames(), ", ")))
		}
	}
	return problems
}

// ControllerEnabled reports whether the named controller runs: a "-name"
// entry turns it off, a "name" or "*" entry on; no entries run every one.
func (o *Options) ControllerEnabled(name string) bool {
	if len(o.Controllers) == 0 {
		return true
	}
	switch {
	case slices.Contains(o.Controllers, "-"+name):
		return false
	case slices.Contains(o.Controllers, name):
		return true
	}
	return slices.Contains(o.Controllers, "*")
}
