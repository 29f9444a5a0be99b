package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Upstream's names of the admission plugins of v1.32, which
// --enable-admission-plugins and --disable-admission-plugins take.
const (
	PluginAlwaysAdmit                          = "AlwaysAdmit"
	PluginNamespaceAutoProvision               = "NamespaceAutoProvision"
	PluginNamespaceLifecycle                   = "NamespaceLifecycle"
	PluginNamespaceExists                      = "NamespaceExists"
	PluginLimitPodHardAntiAffinityTopology     = "LimitPodHardAntiAffinityTopology"
	PluginLimitRanger                          = "LimitRanger"
	PluginServiceAccount                       = "ServiceAccount"
	PluginNodeRestriction                      = "NodeRestriction"
	PluginTaintNodesByCondition                = "TaintNodesByCondition"
	PluginAlwaysPullImages                     = "AlwaysPullImages"
	PluginImagePolicyWebhook                   = "ImagePolicyWebhook"
	PluginPodSecurity                          = "PodSecurity"
	PluginPodNodeSelector                      = "PodNodeSelector"
	PluginPriority                             = "Priority"
	PluginDefaultTolerationSeconds             = "DefaultTolerationSeconds"
	PluginPodTolerationRestriction             = "PodTolerationRestriction"
	PluginEventRateLimit                       = "EventRateLimit"
	PluginExtendedResourceToleration           = "ExtendedResourceToleration"
	PluginDefaultStorageClass                  = "DefaultStorageClass"
	PluginStorageObjectInUseProtection         = "StorageObjectInUseProtection"
	PluginOwnerReferencesPermissionEnforcement = "OwnerReferencesPermissionEnforcement"
	PluginPersistentVolumeClaimResize          = "PersistentVolumeClaimResize"
	PluginRuntimeClass                         = "RuntimeClass"
	PluginCertificateApproval                  = "CertificateApproval"
	PluginCertificateSigning                   = "CertificateSigning"
	PluginClusterTrustBundleAttest             = "ClusterTrustBundleAttest"
	PluginCertificateSubjectRestriction        = "CertificateSubjectRestriction"
	PluginDefaultIngressClass                  = "DefaultIngressClass"
	PluginDenyServiceExternalIPs               = "DenyServiceExternalIPs"
	PluginMutatingAdmissionPolicy              = "MutatingAdmissionPolicy"
	PluginMutatingAdmissionWebhook             = "MutatingAdmissionWebhook"
	PluginValidatingAdmissionPolicy            = "ValidatingAdmissionPolicy"
	PluginValidatingAdmissionWebhook           = "ValidatingAdmissionWebhook"
	PluginResourceQuota                        = "ResourceQuota"
	PluginAlwaysDeny                           = "AlwaysDeny"
)

// AdmissionPluginNames are upstream's admission plugins in the order
// they run.
var AdmissionPluginNames = []string{
	PluginAlwaysAdmit, PluginNamespaceAutoProvision, PluginNamespaceLifecycle, PluginNamespaceExists,
	PluginLimitPodHardAntiAffinityTopology, PluginLimitRanger, PluginServiceAccount, PluginNodeRestriction,
	PluginTaintNodesByCondition, PluginAlwaysPullImages, PluginImagePolicyWebhook, PluginPodSecurity,
	PluginPodNodeSelector, PluginPriority, PluginDefaultTolerationSeconds, PluginPodTolerationRestriction,
	PluginEventRateLimit, PluginExtendedResourceToleration, PluginDefaultStorageClass,
	PluginStorageObjectInUseProtection, PluginOwnerReferencesPermissionEnforcement,
	PluginPersistentVolumeClaimResize, PluginRuntimeClass, PluginCertificateApproval, PluginCertificateSigning,
	PluginClusterTrustBundleAttest, PluginCertificateSubjectRestriction, PluginDefaultIngressClass,
	PluginDenyServiceExternalIPs, PluginMutatingAdmissionPolicy, PluginMutatingAdmissionWebhook,
	PluginValidatingAdmissionPolicy, PluginValidatingAdmissionWebhook, PluginResourceQuota, PluginAlwaysDeny,
}

// defaultOffAdmissionPlugins are the plugins upstream runs only when
// --enable-admission-plugins names them.
var defaultOffAdmissionPlugins = []string{
	PluginAlwaysAdmit, PluginNamespaceAutoProvision, PluginNamespaceExists, PluginLimitPodHardAntiAffinityTopology,
	PluginNodeRestriction, PluginAlwaysPullImages, PluginImagePolicyWebhook, PluginPodNodeSelector,
	PluginPodTolerationRestriction, PluginEventRateLimit, PluginExtendedResourceToleration,
	PluginOwnerReferencesPermissionEnforcement, PluginDenyServiceExternalIPs, PluginAlwaysDeny,
}

// unimplementedAdmissionPlugins are the plugins platd has no admission
// step for. Enabling one is refused rather than ignored: a cluster
// relying on it would run without the protection it asked for. Every
// plugin of upstream's is implemented: AlwaysAdmit admits everything,
// which platd's admission does when no other plugin refuses, and so
// needs no step; the default-on ClusterTrustBundleAttest and
// MutatingAdmissionPolicy act only on APIs platd does not serve.
var unimplementedAdmissionPlugins []string

// AdmissionPluginsOff is the set of admission plugins that do not run.
// The zero value runs upstream's default set.
type AdmissionPluginsOff map[string]bool

// Enabled reports whether the plugin name runs. A nil set is upstream's
// default: every plugin platd implements runs.
func (off AdmissionPluginsOff) Enabled(name string) bool {
	if off == nil {
		return !slices.Contains(defaultOffAdmissionPlugins, name)
	}
	return !off[name]
}

// parseAdmissionPlugins turns --enable-admission-plugins and
// --disable-admission-plugins into the plugins that do not run, with
// upstream's messages for unknown and overlapping names and platd's for
// a plugin it does not implement.
func parseAdmissionPlugins(enable, disable []string) (AdmissionPluginsOff, []string) {
	return parsePluginLists(enable, disable, unimplementedAdmissionPlugins)
}

// parsePluginLists is parseAdmissionPlugins refusing the plugins of
// unimplemented.
func parsePluginLists(enable, disable, unimplemented []string) (AdmissionPluginsOff, []string) {
	var errs []string
	enable, disable = splitPluginNames(enable), splitPluginNames(disable)
	for _, n := range enable {
		if !slices.Contains(AdmissionPluginNames, n) {
			errs = append(errs, fmt.Sprintf("enable-admission-plugins plugin %q is unknown", n))
		}
	}
	for _, n := range disable {
		if !slices.Contains(AdmissionPluginNames, n) {
			errs = append(errs, fmt.Sprintf("disable-admission-plugins plugin %q is unknown", n))
		}
	}
	var both []string
	for _, n := range enable {
		if slices.Contains(disable, n) && !slices.Contains(both, n) {
			both = append(both, n)
		}
	}
	if len(both) > 0 {
		sort.Strings(both)
		errs = append(errs, fmt.Sprintf("[%s] in enable-admission-plugins and disable-admission-plugins overlapped", strings.Join(both, " ")))
	}
	for _, n := range enable {
		if slices.Contains(unimplemented, n) {
			errs = append(errs, fmt.Sprintf("enable-admission-plugins plugin %q is not implemented by platd: drop it from the list (the admission plugins platd runs are %s)", n, strings.Join(implementedOf(unimplemented), ", ")))
		}
	}
	off := AdmissionPluginsOff{}
	for _, n := range defaultOffAdmissionPlugins {
		off[n] = true
	}
	for _, n := range disable {
		off[n] = true
	}
	for _, n := range enable {
		delete(off, n)
	}
	return off, errs
}

// ImplementedAdmissionPlugins are the plugins platd has, in upstream's
// order.
func ImplementedAdmissionPlugins() []string { return implementedOf(unimplementedAdmissionPlugins) }

// implementedOf are upstream's plugins but those of unimplemented.
func implementedOf(unimplemented []string) []string {
	var out []string
	for _, n := range AdmissionPluginNames {
		if !slices.Contains(unimplemented, n) {
			out = append(out, n)
		}
	}
	return out
}

// splitPluginNames are the names of a list flag's values, each of which
// may hold several separated by commas.
func splitPluginNames(values []string) []string {
	var out []string
	for _, v := range values {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// AdmissionPluginsUsage is the usage of --enable-admission-plugins.
func AdmissionPluginsUsage(enable bool) string {
	var on []string
	for _, n := range AdmissionPluginNames {
		if !slices.Contains(defaultOffAdmissionPlugins, n) {
			on = append(on, n)
		}
	}
	if enable {
		usage := "admission plugins to run besides the default ones (" + strings.Join(on, ", ") + "), comma-separated (repeatable); upstream's names: " +
			strings.Join(AdmissionPluginNames, ", ")
		if len(unimplementedAdmissionPlugins) > 0 {
			usage += "; platd refuses to start with one it does not implement (" + strings.Join(unimplementedAdmissionPlugins, ", ") + ")"
		}
		return usage
	}
	return "admission plugins of the default set not to run, comma-separated (repeatable): " + strings.Join(on, ", ")
}
