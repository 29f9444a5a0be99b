package main

// goOrder lists, for types whose Go struct declares its fields in another
// order than their protobuf numbers, the JSON members in Go declaration
// order (of the v1.32 API types). encoding/json writes members in
// declaration order, so the catalog must too. Keys are schema names
// without the reverse domain.
var goOrder = map[string][]string{
	"api.core.v1.ConfigMap":      {"kind", "apiVersion", "metadata", "immutable", "data", "binaryData"},
	"api.core.v1.Secret":         {"kind", "apiVersion", "metadata", "immutable", "data", "stringData", "type"},
	"api.core.v1.LimitRangeItem": {"type", "max", "min", "default", "defaultRequest", "maxLimitRequestRatio"},
	"api.core.v1.Container": {"name", "image", "command", "args", "workingDir", "ports", "envFrom", "env",
		"resources", "resizePolicy", "restartPolicy", "volumeMounts", "volumeDevices", "livenessProbe",
		"readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy",
		"imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"},
	"api.admissionregistration.v1.ValidatingWebhook":                                    {"name", "clientConfig", "rules", "failurePolicy", "matchPolicy", "namespaceSelector", "objectSelector", "sideEffects", "timeoutSeconds", "admissionReviewVersions", "matchConditions"},
	"api.admissionregistration.v1.MutatingWebhook":                                      {"name", "clientConfig", "rules", "failurePolicy", "matchPolicy", "namespaceSelector", "objectSelector", "sideEffects", "timeoutSeconds", "admissionReviewVersions", "reinvocationPolicy", "matchConditions"},
	"api.admissionregistration.v1.WebhookClientConfig":                                  {"url", "service", "caBundle"},
	"api.apps.v1.DeploymentStatus":                                                      {"observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas", "conditions", "collisionCount"},
	"api.apps.v1.DeploymentCondition":                                                   {"type", "status", "lastUpdateTime", "lastTransitionTime", "reason", "message"},
	"api.apps.v1.ReplicaSetSpec":                                                        {"replicas", "minReadySeconds", "selector", "template"},
	"api.apps.v1.ReplicaSetStatus":                                                      {"replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration", "conditions"},
	"api.authentication.v1.TokenReviewStatus":                                           {"authenticated", "user", "audiences", "error"},
	"api.authentication.v1.TokenRequestSpec":                                            {"audiences", "expirationSeconds", "boundObjectRef"},
	"api.authorization.v1.SubjectAccessReviewStatus":                                    {"allowed", "denied", "reason", "evaluationError"},
	"api.autoscaling.v2.MetricSpec":                                                     {"type", "object", "pods", "resource", "containerResource", "external"},
	"api.autoscaling.v2.HPAScalingRules":                                                {"stabilizationWindowSeconds", "selectPolicy", "policies"},
	"api.autoscaling.v2.MetricStatus":                                                   {"type", "object", "pods", "resource", "containerResource", "external"},
	"api.batch.v1.JobSpec":                                                              {"parallelism", "completions", "activeDeadlineSeconds", "podFailurePolicy", "successPolicy", "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes", "selector", "manualSelector", "template", "ttlSecondsAfterFinished", "completionMode", "suspend", "podReplacementPolicy", "managedBy"},
	"api.batch.v1.JobStatus":                                                            {"conditions", "startTime", "completionTime", "active", "succeeded", "failed", "terminating", "completedIndexes", "failedIndexes", "uncountedTerminatedPods", "ready"},
	"api.batch.v1.CronJobSpec":                                                          {"schedule", "timeZone", "startingDeadlineSeconds", "concurrencyPolicy", "suspend", "jobTemplate", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"},
	"api.certificates.v1.CertificateSigningRequestSpec":                                 {"request", "signerName", "expirationSeconds", "usages", "username", "uid", "groups", "extra"},
	"api.certificates.v1.CertificateSigningRequestCondition":                            {"type", "status", "reason", "message", "lastUpdateTime", "lastTransitionTime"},
	"api.core.v1.VolumeSource":                                                          {"hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image"},
	"api.core.v1.PersistentVolumeClaimSpec":                                             {"accessModes", "selector", "resources", "volumeName", "storageClassName", "volumeMode", "dataSource", "dataSourceRef", "volumeAttributesClassName"},
	"api.core.v1.ISCSIVolumeSource":                                                     {"targetPortal", "iqn", "lun", "iscsiInterface", "fsType", "readOnly", "portals", "chapAuthDiscovery", "chapAuthSession", "secretRef", "initiatorName"},
	"api.core.v1.ISCSIPersistentVolumeSource":                                           {"targetPortal", "iqn", "lun", "iscsiInterface", "fsType", "readOnly", "portals", "chapAuthDiscovery", "chapAuthSession", "secretRef", "initiatorName"},
	"api.core.v1.ClusterTrustBundleProjection":                                          {"name", "signerName", "labelSelector", "optional", "path"},
	"api.core.v1.VolumeMount":                                                           {"name", "readOnly", "recursiveReadOnly", "mountPath", "subPath", "mountPropagation", "subPathExpr"},
	"api.core.v1.PodSpec":                                                               {"volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy", "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector", "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname", "subdomain", "affinity", "schedulerName", "tolerations", "hostAliases", "priorityClassName", "priority", "dnsConfig", "readinessGates", "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead", "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates", "resourceClaims", "resources"},
	"api.core.v1.PodSecurityContext":                                                    {"seLinuxOptions", "windowsOptions", "runAsUser", "runAsGroup", "runAsNonRoot", "supplementalGroups", "supplementalGroupsPolicy", "fsGroup", "sysctls", "fsGroupChangePolicy", "seccompProfile", "appArmorProfile", "seLinuxChangePolicy"},
	"api.core.v1.EphemeralContainerCommon":                                              {"name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy", "restartPolicy", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"},
	"api.core.v1.PodStatus":                                                             {"phase", "conditions", "message", "reason", "nominatedNodeName", "hostIP", "hostIPs", "podIP", "podIPs", "startTime", "initContainerStatuses", "containerStatuses", "qosClass", "ephemeralContainerStatuses", "resize", "resourceClaimStatuses"},
	"api.core.v1.ReplicationControllerSpec":                                             {"replicas", "minReadySeconds", "selector", "template"},
	"api.core.v1.ReplicationControllerStatus":                                           {"replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration", "conditions"},
	"api.core.v1.ServiceSpec":                                                           {"ports", "selector", "clusterIP", "clusterIPs", "type", "externalIPs", "sessionAffinity", "loadBalancerIP", "loadBalancerSourceRanges", "externalName", "externalTrafficPolicy", "healthCheckNodePort", "publishNotReadyAddresses", "sessionAffinityConfig", "ipFamilies", "ipFamilyPolicy", "allocateLoadBalancerNodePorts", "loadBalancerClass", "internalTrafficPolicy", "trafficDistribution"},
	"api.core.v1.ServicePort":                                                           {"name", "protocol", "appProtocol", "port", "targetPort", "nodePort"},
	"api.core.v1.EndpointAddress":                                                       {"ip", "hostname", "nodeName", "targetRef"},
	"api.core.v1.NodeSpec":                                                              {"podCIDR", "podCIDRs", "providerID", "unschedulable", "taints", "configSource", "externalID"},
	"api.core.v1.SecurityContext":                                                       {"capabilities", "privileged", "seLinuxOptions", "windowsOptions", "runAsUser", "runAsGroup", "runAsNonRoot", "readOnlyRootFilesystem", "allowPrivilegeEscalation", "procMount", "seccompProfile", "appArmorProfile"},
	"api.discovery.v1.EndpointSlice":                                                    {"kind", "apiVersion", "metadata", "addressType", "endpoints", "ports"},
	"api.networking.v1.IngressSpec":                                                     {"ingressClassName", "defaultBackend", "tls", "rules"},
	"api.networking.v1.HTTPIngressPath":                                                 {"path", "pathType", "backend"},
	"api.networking.v1.IngressBackend":                                                  {"service", "resource"},
	"apimachinery.pkg.apis.meta.v1.OwnerReference":                                      {"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"},
	"apimachinery.pkg.apis.meta.v1.StatusDetails":                                       {"name", "group", "kind", "uid", "causes", "retryAfterSeconds"},
	"apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookClientConfig":             {"url", "service", "caBundle"},
	"apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion": {"name", "served", "storage", "deprecated", "deprecationWarning", "schema", "subresources", "additionalPrinterColumns", "selectableFields"},
}

// applyOverride reorders fields per goOrder: listed members first in the
// listed order, the others after in their previous order.
func applyOverride(name string, fields []*gField) []*gField {
	order, ok := goOrder[name]
	if !ok {
		return fields
	}
	byName := map[string]*gField{}
	for _, f := range fields {
		if !f.inline {
			byName[f.name] = f
		}
	}
	out := make([]*gField, 0, len(fields))
	done := map[*gField]bool{}
	for _, n := range order {
		if f := byName[n]; f != nil {
			out = append(out, f)
			done[f] = true
		}
	}
	for _, f := range fields {
		if !done[f] {
			out = append(out, f)
		}
	}
	return out
}

// alwaysEncoded lists members whose Go field has no omitempty although the
// OpenAPI document does not mark them required (they are +optional in
// upstream's comments): encoding/json writes them, as null when nil.
var alwaysEncoded = map[string][]string{
	"api.rbac.v1.ClusterRole":                {"rules"},
	"api.rbac.v1.Role":                       {"rules"},
	"api.core.v1.Event":                      {"reportingComponent", "reportingInstance"},
	"api.authentication.v1.TokenRequestSpec": {"boundObjectRef"},
}

// applyAlwaysEncoded clears OmitEmpty on the members alwaysEncoded names.
func applyAlwaysEncoded(name string, fields []*gField) {
	for _, n := range alwaysEncoded[name] {
		for _, f := range fields {
			if f.name == n {
				f.omitEmpty = false
			}
		}
	}
}
