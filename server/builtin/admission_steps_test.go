package builtin

import (
	"slices"
	"testing"

	"platd/config"
)

// TestAdmissionStepsInPluginOrder: every type's admission steps run in
// upstream's order of their plugins, a type's own steps among those set
// across groups.
func TestAdmissionStepsInPluginOrder(t *testing.T) {
	t.Parallel()
	ds := all(brand, DefaultServiceRanges(), Services{Admission: config.AdmissionPluginsOff{}, ImagePolicyWebhook: &config.ImagePolicyWebhookConfiguration{}})
	for _, d := range ds {
		var plugins []string
		for _, st := range d.Strategy.AdmissionSteps {
			plugins = append(plugins, st.Plugin)
		}
		if !slices.IsSortedFunc(plugins, func(a, b string) int {
			return slices.Index(config.AdmissionPluginNames, a) - slices.Index(config.AdmissionPluginNames, b)
		}) {
			t.Errorf("%s: steps of %v, not in upstream's order", d.Kind, plugins)
		}
	}
	var pod []string
	for _, st := range kindOf(ds, "Pod").Strategy.AdmissionSteps {
		pod = append(pod, st.Plugin)
	}
	want := []string{
		config.PluginLimitPodHardAntiAffinityTopology, config.PluginLimitRanger, config.PluginServiceAccount, config.PluginAlwaysPullImages,
		config.PluginImagePolicyWebhook, config.PluginPodSecurity, config.PluginPodNodeSelector, config.PluginPriority, config.PluginDefaultTolerationSeconds,
		config.PluginPodTolerationRestriction, config.PluginExtendedResourceToleration, config.PluginRuntimeClass,
	}
	if !slices.Equal(pod, want) {
		t.Errorf("pod steps %v, want %v", pod, want)
	}
}
