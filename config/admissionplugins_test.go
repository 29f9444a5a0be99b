package config

import (
	"slices"
	"strings"
	"testing"
)

func TestAdmissionPluginFlags(t *testing.T) {
	t.Parallel()
	imagePolicy := writeImagePolicyFiles(t, "imagePolicy: {kubeConfigFile: %s}\n")
	for _, c := range []struct {
		name            string
		enable, disable []string
		configFile      string
		on, off         []string
		wantError       string
	}{
		{name: "defaults",
			on:  []string{PluginNamespaceLifecycle, PluginLimitRanger, PluginServiceAccount, PluginPodSecurity, PluginResourceQuota, PluginValidatingAdmissionPolicy, PluginMutatingAdmissionWebhook, PluginDefaultTolerationSeconds},
			off: []string{PluginAlwaysAdmit, PluginNodeRestriction, PluginAlwaysDeny, PluginDenyServiceExternalIPs, PluginAlwaysPullImages, PluginLimitPodHardAntiAffinityTopology, PluginExtendedResourceToleration}},
		{name: "disable one", disable: []string{PluginServiceAccount},
			on: []string{PluginLimitRanger}, off: []string{PluginServiceAccount}},
		{name: "comma-separated and repeated", disable: []string{"ServiceAccount,LimitRanger", " Priority "},
			on: []string{PluginRuntimeClass}, off: []string{PluginServiceAccount, PluginLimitRanger, PluginPriority}},
		{name: "enable a default one", enable: []string{PluginLimitRanger}, on: []string{PluginLimitRanger}},
		{name: "enable an inert one", enable: []string{PluginAlwaysAdmit}, on: []string{PluginAlwaysAdmit, PluginServiceAccount}},
		{name: "unknown enabled", enable: []string{"Nope"}, wantError: `enable-admission-plugins plugin "Nope" is unknown`},
		{name: "unknown disabled", disable: []string{"LimitRanger,Nope"}, wantError: `disable-admission-plugins plugin "Nope" is unknown`},
		{name: "overlap", enable: []string{"Priority,LimitRanger"}, disable: []string{"LimitRanger", "Priority"},
			wantError: `[LimitRanger Priority] in enable-admission-plugins and disable-admission-plugins overlapped`},
		{name: "enable a default-off one", enable: []string{PluginNodeRestriction}, on: []string{PluginNodeRestriction, PluginServiceAccount}},
		{name: "enable LimitPodHardAntiAffinityTopology", enable: []string{PluginLimitPodHardAntiAffinityTopology},
			on: []string{PluginLimitPodHardAntiAffinityTopology, PluginServiceAccount}},
		{name: "enable ExtendedResourceToleration", enable: []string{PluginExtendedResourceToleration},
			on: []string{PluginExtendedResourceToleration, PluginServiceAccount}},
		{name: "enable DenyServiceExternalIPs", enable: []string{PluginDenyServiceExternalIPs},
			on: []string{PluginDenyServiceExternalIPs, PluginServiceAccount}},
		{name: "ImagePolicyWebhook needs its configuration", enable: []string{PluginImagePolicyWebhook},
			wantError: `--admission-control-config-file: invalid admission control configuration: couldn't init admission plugin "ImagePolicyWebhook": no config specified`},
		{name: "enable ImagePolicyWebhook", enable: []string{PluginImagePolicyWebhook}, configFile: imagePolicy,
			on: []string{PluginImagePolicyWebhook, PluginServiceAccount}},
		{name: "ImagePolicyWebhook off by default", configFile: imagePolicy, off: []string{PluginImagePolicyWebhook}},
		{name: "EventRateLimit needs its configuration", enable: []string{PluginEventRateLimit},
			wantError: `--admission-control-config-file: invalid admission control configuration: couldn't init admission plugin "EventRateLimit": limits: Invalid value: []eventratelimit.Limit(nil): must not be empty`},
		{name: "enable AlwaysPullImages", enable: []string{PluginAlwaysPullImages}, on: []string{PluginAlwaysPullImages, PluginServiceAccount}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := Options{DataDir: "d", BindAddress: "127.0.0.1", AuthorizationModes: []string{ModeAlwaysAllow}, HistoryRetention: 1,
				EnableAdmissionPlugins: c.enable, DisableAdmissionPlugins: c.disable, AdmissionControlConfigFile: c.configFile}
			err := o.Validate()
			if c.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantError) {
					t.Fatalf("error %v, want %q", err, c.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range c.on {
				if !o.AdmissionOff.Enabled(n) {
					t.Errorf("%s off, want on", n)
				}
			}
			for _, n := range c.off {
				if o.AdmissionOff.Enabled(n) {
					t.Errorf("%s on, want off", n)
				}
			}
		})
	}
	// The zero value is upstream's default set.
	var zero AdmissionPluginsOff
	if !zero.Enabled(PluginServiceAccount) || zero.Enabled(PluginAlwaysDeny) {
		t.Errorf("zero value: ServiceAccount %v AlwaysDeny %v, want on and off", zero.Enabled(PluginServiceAccount), zero.Enabled(PluginAlwaysDeny))
	}
}

// TestUnimplementedAdmissionPluginRefused: enabling a plugin platd does
// not implement stops it, naming those it runs; disabling one is fine.
// Every upstream plugin is implemented, so the list is made up here.
func TestUnimplementedAdmissionPluginRefused(t *testing.T) {
	t.Parallel()
	if len(unimplementedAdmissionPlugins) != 0 {
		t.Errorf("unimplemented plugins %v, want none", unimplementedAdmissionPlugins)
	}
	if got := ImplementedAdmissionPlugins(); !slices.Equal(got, AdmissionPluginNames) {
		t.Errorf("implemented %v, want every plugin", got)
	}
	unimplemented := []string{PluginAlwaysDeny}
	_, errs := parsePluginLists([]string{PluginAlwaysDeny}, nil, unimplemented)
	want := `enable-admission-plugins plugin "AlwaysDeny" is not implemented by platd: drop it from the list (the admission plugins platd runs are ` +
		strings.Join(AdmissionPluginNames[:len(AdmissionPluginNames)-1], ", ") + ")"
	if len(errs) != 1 || errs[0] != want {
		t.Errorf("errors %q, want %q", errs, want)
	}
	off, errs := parsePluginLists(nil, []string{PluginAlwaysDeny}, unimplemented)
	if len(errs) != 0 || off.Enabled(PluginAlwaysDeny) {
		t.Errorf("disabling: errors %q, AlwaysDeny enabled %v", errs, off.Enabled(PluginAlwaysDeny))
	}
}
