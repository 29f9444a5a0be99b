package builtin

import (
	"slices"
	"strings"
	"testing"

	"platd/server/apierr"
	"platd/server/validation"
)

// specErrs defaults a PodSpec as every PodSpec is defaulted, then
// validates it at "spec".
func specErrs(t *testing.T, specJSON string, opts podSpecOptions) []string {
	t.Helper()
	spec := decodeJSON(t, specJSON)
	defaultPodSpec(spec)
	return errStrings(newPodRules(brand).validatePodSpec(spec, pathOf("spec"), opts))
}

// msgs renders one Invalid error per message of a name rule.
func msgs(field string, value string, rule func(string) []string) []string {
	var out []string
	for _, m := range rule(value) {
		out = append(out, apierr.Invalid(field, value, m).Error())
	}
	return out
}

func cat(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch x := p.(type) {
		case string:
			out = append(out, x)
		case []string:
			out = append(out, x...)
		}
	}
	return out
}

const (
	relaxedEnvMsg = "a valid environment variable name must consist only of printable ASCII characters other than '='"
	portRangeMsg  = "must be between 1 and 65535, inclusive"
	idRangeMsg    = "must be between 0 and 2147483647, inclusive"
)

func TestValidatePodSpec(t *testing.T) {
	t.Parallel()
	const c0 = "spec.containers[0]"
	tests := []struct {
		name string
		spec string
		want []string
	}{
		{"valid", `{"containers":[{"name":"c","image":"nginx"}]}`, nil},
		{"no containers", `{}`, []string{"spec.containers: Required value"}},
		{"empty init, ephemeral and gate lists", `{"containers":[{"name":"c","image":"x"}],"initContainers":[],"ephemeralContainers":[],"schedulingGates":[]}`, nil},
		{"scheduling gates", `{"containers":[{"name":"c","image":"x"}],"schedulingGates":[{"name":"g"},{"name":"g"},{"name":"-"}]}`,
			cat(`spec.schedulingGates[1]: Duplicate value: "g"`, msgs("spec.schedulingGates[2]", "-", validation.IsQualifiedName))},
		{"container without name and image", `{"containers":[{}]}`, []string{c0 + ".name: Required value", c0 + ".image: Required value"}},
		{"container name", `{"containers":[{"name":"C","image":"x"}]}`, msgs(c0+".name", "C", validation.IsDNS1123Label)},
		{"names unique across kinds", `{"containers":[{"name":"a","image":"x"},{"name":"a","image":"x"}],"initContainers":[{"name":"a","image":"x"}]}`, []string{
			`spec.containers[1].name: Duplicate value: "a"`, `spec.initContainers[0].name: Duplicate value: "a"`,
		}},
		{"ports", `{"containers":[{"name":"c","image":"x","ports":[{"containerPort":0},{"containerPort":70000,"hostPort":-1,"name":"http"},
			{"containerPort":1,"name":"http","protocol":"XX"},{"name":"a_b","containerPort":2},{"name":"123","containerPort":3}]}]}`, []string{
			c0 + ".ports[0].containerPort: Required value",
			c0 + ".ports[1].containerPort: Invalid value: 70000: " + portRangeMsg,
			c0 + ".ports[1].hostPort: Invalid value: -1: " + portRangeMsg,
			c0 + `.ports[2].name: Duplicate value: "http"`,
			c0 + `.ports[2].protocol: Unsupported value: "XX": supported values: "SCTP", "TCP", "UDP"`,
			c0 + `.ports[3].name: Invalid value: "a_b": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
			c0 + `.ports[4].name: Invalid value: "123": must contain at least one letter (a-z)`,
		}},
		{"host ports unique", `{"containers":[{"name":"a","image":"x","ports":[{"containerPort":1,"hostPort":8080}]},{"name":"b","image":"x","ports":[{"containerPort":2,"hostPort":8080}]}]}`, []string{
			`spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"`,
		}},
		{"env", `{"containers":[{"name":"c","image":"x","env":[{"name":""},{"name":"A=B"},{"name":"X","valueFrom":{}},
			{"name":"Y","value":"v","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},
			{"name":"Z","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"},"secretKeyRef":{"name":"s","key":"k"}}},
			{"name":"W","valueFrom":{"fieldRef":{"fieldPath":"status.phase"}}},
			{"name":"V","valueFrom":{"configMapKeyRef":{"name":"","key":"a b"}}},
			{"name":"U","valueFrom":{"fieldRef":{"fieldPath":"foo"}}},
			{"name":"T","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['app']"}}},
			{"name":"1 ok.too","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"1Mi"}}}]}]}`, cat(
			c0+".env[0].name: Required value",
			c0+`.env[1].name: Invalid value: "A=B": `+relaxedEnvMsg,
			c0+".env[2].valueFrom: Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
			c0+".env[3].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty",
			c0+".env[4].valueFrom: Invalid value: \"\": may not have more than one field specified at a time",
			c0+`.env[5].valueFrom.fieldRef.fieldPath: Unsupported value: "status.phase": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"`,
			msgs(c0+".env[6].valueFrom.configMapKeyRef.name", "", validation.IsDNS1123Subdomain),
			c0+`.env[6].valueFrom.configMapKeyRef.key: Invalid value: "a b": `+configKeyMsg,
			c0+`.env[7].valueFrom.fieldRef.fieldPath: Invalid value: "foo": error converting fieldPath: field label not supported: foo`,
			c0+`.env[9].valueFrom.resourceFieldRef.divisor: Invalid value: "limits.cpu": only divisor's values 1m and 1 are supported with the cpu resource`,
		)},
		{"envFrom", `{"containers":[{"name":"c","image":"x","envFrom":[{"prefix":"=","configMapRef":{"name":"cm-"}},{},{"secretRef":{"name":""}}]}]}`, []string{
			c0 + `.envFrom[0].prefix: Invalid value: "=": ` + relaxedEnvMsg,
			c0 + ".envFrom: Invalid value: \"\": must specify one of: `configMapRef` or `secretRef`",
			c0 + ".envFrom[2].secretRef.name: Required value",
		}},
		{"volumes and mounts", `{"volumes":[{"name":"v"},{"name":"v"},{"name":"Bad"},{"name":"s","secret":{},"configMap":{"name":"x"}}],
			"containers":[{"name":"c","image":"x","volumeMounts":[{"name":"v","mountPath":"/a"},{"name":"missing","mountPath":"/a"},{"name":"v","mountPath":""}]}]}`, cat(
			`spec.volumes[1].name: Duplicate value: "v"`,
			msgs("spec.volumes[2].name", "Bad", validation.IsDNS1123Label),
			"spec.volumes[3].secret.secretName: Required value",
			"spec.volumes[3].configMap: Forbidden: may not specify more than 1 volume type",
			c0+`.volumeMounts[1].name: Not found: "missing"`,
			c0+`.volumeMounts[1].mountPath: Invalid value: "/a": must be unique`,
			c0+".volumeMounts[2].mountPath: Required value",
		)},
		{"volume sources", `{"containers":[{"name":"c","image":"x"}],"volumes":[{"name":"v0","hostPath":{"path":""}},{"name":"v1","hostPath":{"path":"/a/../b","type":"Weird"}},
			{"name":"v2","nfs":{"server":"s","path":"rel"}},{"name":"v3","persistentVolumeClaim":{}},
			{"name":"v4","projected":{"sources":[{"serviceAccountToken":{"path":"","expirationSeconds":60}}]}},
			{"name":"v5","configMap":{"name":"c","items":[{"key":"","path":"../x","mode":1000}]}},
			{"name":"v6","emptyDir":{"sizeLimit":"-1"}},{"name":"v7","downwardAPI":{"items":[{"path":"p","fieldRef":{"fieldPath":"spec.nodeName"}}]}},
			{"name":"v8","cephfs":{},"downwardAPI":{}}]}`, []string{
			"spec.volumes[0].hostPath.path: Required value",
			`spec.volumes[1].hostPath.path: Invalid value: "/a/../b": must not contain '..'`,
			`spec.volumes[1].hostPath.type: Unsupported value: "Weird": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"`,
			`spec.volumes[2].nfs.path: Invalid value: "rel": must be an absolute path`,
			"spec.volumes[3].persistentVolumeClaim.claimName: Required value",
			"spec.volumes[4].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes",
			"spec.volumes[4].projected.path: Required value",
			"spec.volumes[5].configMap.items[0].key: Required value",
			`spec.volumes[5].configMap.items[0].path: Invalid value: "../x": must not contain '..'`,
			"spec.volumes[5].configMap.items[0].mode: Invalid value: 1000: " + msgFileMode,
			"spec.volumes[6].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity",
			`spec.volumes[7].downwardAPI.fieldRef.fieldPath: Unsupported value: "spec.nodeName": supported values: "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"`,
			"spec.volumes[8].cephfs.monitors: Required value",
			"spec.volumes[8].downwarAPI: Forbidden: may not specify more than 1 volume type",
		}},
		{"probes", `{"containers":[{"name":"c","image":"x","livenessProbe":{"successThreshold":2,"initialDelaySeconds":-1},
			"readinessProbe":{"exec":{"command":[]},"httpGet":{"port":0},"terminationGracePeriodSeconds":5},
			"startupProbe":{"tcpSocket":{"port":"Bad_Name"}},"lifecycle":{"preStop":{"sleep":{"seconds":60}},"postStart":{"httpGet":{"port":70000,"scheme":"FTP","httpHeaders":[{"name":"X Bad","value":"v"}]}}}}]}`, []string{
			c0 + ".lifecycle.postStart.httpGet.port: Invalid value: 70000: " + portRangeMsg,
			c0 + `.lifecycle.postStart.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"`,
			c0 + `.lifecycle.postStart.httpGet.httpHeaders: Invalid value: "X Bad": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')`,
			c0 + ".lifecycle.preStop.sleep: Invalid value: 60: must be greater than 0 and less than terminationGracePeriodSeconds (30). Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep.",
			c0 + ".livenessProbe: Required value: must specify a handler type",
			c0 + ".livenessProbe.initialDelaySeconds: Invalid value: -1: must be greater than or equal to 0",
			c0 + ".livenessProbe.successThreshold: Invalid value: 2: must be 1",
			c0 + ".readinessProbe.exec.command: Required value",
			c0 + ".readinessProbe.httpGet: Forbidden: may not specify more than 1 handler type",
			c0 + ".readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes",
			c0 + `.startupProbe.tcpSocket.port: Invalid value: "Bad_Name": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
		}},
		{"resources", `{"containers":[{"name":"c","image":"x","resources":{"limits":{"cpu":"1","memory":"-1","example.com/foo":"1500m","hugepages-2Mi":"3Mi"},
			"requests":{"cpu":"2","bogus":"1"}}}]}`, []string{
			c0 + ".resources.limits[example.com/foo]: Invalid value: 1500m: must be an integer",
			c0 + `.resources.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi`,
			c0 + `.resources.limits[memory]: Invalid value: "-1": must be greater than or equal to 0`,
			c0 + `.resources.requests[bogus]: Invalid value: "bogus": must be a standard resource type or fully qualified`,
			c0 + `.resources.requests[bogus]: Invalid value: "bogus": must be a standard resource for containers`,
			c0 + `.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
		}},
		{"non-overcommitable resources", `{"containers":[{"name":"c","image":"x","resources":{"limits":{"example.com/gpu":"2"},"requests":{"example.com/gpu":"1","example.com/fpga":"1","hugepages-1Gi":"1Gi"}}}]}`, []string{
			c0 + ".resources.limits: Required value: Limit must be set for non overcommitable resources",
			c0 + `.resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2`,
			c0 + ".resources.limits: Required value: Limit must be set for non overcommitable resources",
			c0 + ".resources: Forbidden: HugePages require cpu or memory",
		}},
		{"spec fields", `{"containers":[{"name":"c","image":"x"}],"restartPolicy":"x","dnsPolicy":"x","nodeSelector":{"a b":"c d"},
			"serviceAccountName":"Bad","nodeName":"bad_","activeDeadlineSeconds":0,"hostname":"a.b","subdomain":"A","priorityClassName":"-x",
			"hostAliases":[{"ip":"300.1.1.1","hostnames":["OK"]},{"ip":"010.0.0.1"}],"preemptionPolicy":"x","os":{"name":"mac"},"readinessGates":[{"conditionType":"a/b/c"}],
			"schedulingGates":[{"name":"g"},{"name":"g"}]}`, cat(
			`spec.restartPolicy: Unsupported value: "x": supported values: "Always", "OnFailure", "Never"`,
			`spec.dnsPolicy: Unsupported value: "x": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"`,
			msgs("spec.nodeSelector", "a b", validation.IsQualifiedName),
			msgs("spec.nodeSelector", "c d", validation.IsValidLabelValue),
			msgs("spec.readinessGates[0].conditionType", "a/b/c", validation.IsQualifiedName),
			`spec.schedulingGates[1]: Duplicate value: "g"`,
			msgs("spec.serviceAccountName", "Bad", validation.IsDNS1123Subdomain),
			msgs("spec.nodeName", "bad_", validation.IsDNS1123Subdomain),
			"spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive",
			`spec.hostname: Invalid value: "a.b": must not contain dots`,
			msgs("spec.subdomain", "A", validation.IsDNS1123Label),
			`spec.hostAliases[0].ip: Invalid value: "300.1.1.1": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
			msgs("spec.hostAliases[0].hostnames[0]", "OK", validation.IsDNS1123Subdomain),
			msgs("spec.priorityClassName", "-x", validation.IsDNS1123Subdomain),
			`spec.preemptionPolicy: Unsupported value: "x": supported values: "PreemptLowerPriority", "Never"`,
			`spec.os: Unsupported value: "mac": supported values: "linux", "windows"`,
		)},
		{"tolerations", `{"containers":[{"name":"c","image":"x"}],"tolerations":[{"key":"k","operator":"Exists","value":"v"},{"operator":"Equal"},
			{"key":"k","tolerationSeconds":5,"effect":"NoSchedule"},{"key":"bad key"},{"key":"k","value":"bad value!"},{"key":"k","operator":"In","effect":"Never"}]}`, cat(
			`spec.tolerations[0].operator: Invalid value: core.Toleration{Key:"k", Operator:"Exists", Value:"v", Effect:"", TolerationSeconds:(*int64)(nil)}: value must be empty when `+"`operator`"+` is 'Exists'`,
			`spec.tolerations[1].operator: Invalid value: "Equal": operator must be Exists when `+"`key`"+` is empty, which means "match all values and all keys"`,
			`spec.tolerations[2].effect: Invalid value: "NoSchedule": effect must be 'NoExecute' when `+"`tolerationSeconds`"+` is set`,
			msgs("spec.tolerations[3].key", "bad key", validation.IsQualifiedName),
			msgs("spec.tolerations[4].operator", "bad value!", validation.IsValidLabelValue),
			`spec.tolerations[5].operator: Unsupported value: "In": supported values: "Equal", "Exists"`,
			`spec.tolerations[5].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
		)},
		{"init containers", `{"containers":[{"name":"c","image":"x","restartPolicy":"Always"}],"initContainers":[
			{"name":"i","image":"x","restartPolicy":"OnFailure","livenessProbe":{"exec":{"command":["a"]}}},
			{"name":"s","image":"x","restartPolicy":"Always","readinessProbe":{"exec":{"command":["a"]}},"startupProbe":{}}]}`, []string{
			c0 + ".restartPolicy: Forbidden: may not be set for non-init containers",
			`spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"`,
			"spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always",
			"spec.initContainers[1].startupProbe: Required value: must specify a handler type",
		}},
		{"ephemeral containers", `{"volumes":[{"name":"v"}],"containers":[{"name":"c","image":"x"}],"ephemeralContainers":[{"name":"c","image":" x","ports":[{"containerPort":1}],
			"targetContainerName":"nope","volumeMounts":[{"name":"v","mountPath":"/m","subPath":"s"}]}]}`, []string{
			`spec.ephemeralContainers[0].image: Invalid value: " x": must not have leading or trailing whitespace`,
			`spec.ephemeralContainers[0].name: Duplicate value: "c"`,
			`spec.ephemeralContainers[0].targetContainerName: Not found: "nope"`,
			"spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
			"spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container",
		}},
		{"dns none without config", `{"containers":[{"name":"c","image":"x"}],"dnsPolicy":"None"}`, []string{
			"spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None",
		}},
		{"dns config", `{"containers":[{"name":"c","image":"x"}],"dnsConfig":{"nameservers":["1.1.1.1","bad"],"searches":["Bad.","ok.example."],"options":[{}]}}`, cat(
			`spec.dnsConfig.nameservers[1]: Invalid value: "bad": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
			msgs("spec.dnsConfig.searches[0]", "Bad", validation.IsDNS1123Subdomain),
			"spec.dnsConfig.options[0]: Required value: must not be empty",
		)},
		{"security contexts", `{"hostPID":true,"shareProcessNamespace":true,"securityContext":{"runAsUser":-1,"fsGroup":1099511627776,"seccompProfile":{"type":"Localhost"}},
			"containers":[{"name":"c","image":"x","securityContext":{"runAsGroup":-5,"procMount":"Unmasked","appArmorProfile":{"type":"Bogus"},"seccompProfile":{"type":"RuntimeDefault","localhostProfile":"p"}}}]}`, []string{
			c0 + ".securityContext.runAsGroup: Invalid value: -5: " + idRangeMsg,
			c0 + ".securityContext.procMount: Forbidden: `hostUsers` must be false to use `Unmasked`",
			c0 + `.securityContext.seccompProfile.localhostProfile: Invalid value: map[string]interface {}{"localhostProfile":"p", "type":"RuntimeDefault"}: can only be set when seccomp type is Localhost`,
			c0 + `.securityContext.appArmorProfile.type: Unsupported value: "Bogus": supported values: "Localhost", "RuntimeDefault", "Unconfined"`,
			"spec.securityContext.fsGroup: Invalid value: 1099511627776: " + idRangeMsg,
			"spec.securityContext.runAsUser: Invalid value: -1: " + idRangeMsg,
			"spec.securityContext.shareProcessNamespace: Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled",
			"spec.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost",
		}},
		{"affinity and spreading", `{"containers":[{"name":"c","image":"x"}],"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[]}},
			"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":0,"podAffinityTerm":{"labelSelector":{"matchExpressions":[{"key":"k","operator":"In"}]}}}]}},
			"topologySpreadConstraints":[{"maxSkew":0,"topologyKey":"","whenUnsatisfiable":"x"}]}`, cat(
			"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term",
			"spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100",
			"spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
			"spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey: Required value: can not be empty",
			msgs("spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey", "", validation.IsQualifiedName),
			"spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
			"spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty",
			`spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "x": supported values: "DoNotSchedule", "ScheduleAnyway"`,
		)},
		{"windows pod", `{"os":{"name":"windows"},"hostPID":true,"securityContext":{"runAsUser":1},"containers":[{"name":"c","image":"x","securityContext":{"privileged":false}}]}`, []string{
			"spec.hostPID: Forbidden: cannot be set for a windows pod",
			"spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod",
			c0 + ".securityContext.privileged: Forbidden: cannot be set for a windows pod",
		}},
	}
	for _, tt := range tests {
		checkStrings(t, tt.name, specErrs(t, tt.spec, podSpecOptions{}), tt.want)
	}
}

func TestValidatePodSpecHostNetwork(t *testing.T) {
	t.Parallel()
	const spec = `{"hostNetwork":true,"containers":[{"name":"c","image":"x","ports":[{"containerPort":80,"hostPort":81},{"containerPort":82}]}]}`
	template := specErrs(t, spec, podSpecOptions{})
	if want := []string{"spec.containers[0].ports[0].hostPort: Invalid value: 81: must match `containerPort` when `hostNetwork` is true"}; !slices.Equal(template, want) {
		t.Errorf("template: %q", template)
	}
	pod := specErrs(t, spec, podSpecOptions{resourceIsPod: true})
	if len(pod) != 2 || pod[1] != "spec.containers[0].ports[1].hostPort: Invalid value: 0: must match `containerPort` when `hostNetwork` is true" {
		t.Errorf("pod: %q", pod)
	}
}

func TestValidatePodSpecEphemeralClaimTemplate(t *testing.T) {
	t.Parallel()
	spec := `{"containers":[{"name":"c","image":"x"}],"volumes":[{"name":"v","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["Sometimes"]}}}}]}`
	got := specErrs(t, spec, podSpecOptions{resourceIsPod: true, podName: "pod"})
	want := []string{
		`spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Unsupported value: "Sometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`,
		"spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources[storage]: Required value",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q", got)
	}
}

func TestValidatePodSpecEphemeralClaimNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("v", 60)
	spec := `{"containers":[{"name":"c","image":"x"}],"volumes":[{"name":"` + long + `","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}},
		{"name":"p","persistentVolumeClaim":{"claimName":"pod-` + long + `"}}]}`
	got := specErrs(t, spec, podSpecOptions{resourceIsPod: true, podName: "pod"})
	want := []string{`spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: "pod-` + long + `": must not reference a PVC that gets created for an ephemeral volume`}
	if !slices.Equal(got, want) {
		t.Errorf("got %q", got)
	}
}
