package builtin

import (
	"testing"

	"platd/server/registry"
	"platd/server/schema"
)

// FuzzPodPipeline feeds decoded pods and pod templates through every step
// a write runs (defaults, create and update preparation, schema defaults,
// validation, field selectors, deletion grace) and requires that none
// panics, whatever the shape of the object.
func FuzzPodPipeline(f *testing.F) {
	f.Add([]byte(minimalPod))
	f.Add([]byte(`{"spec":{"containers":[{"name":"c","image":"x","ports":[{"containerPort":80,"hostPort":70000}],"resources":{"limits":{"cpu":"1","hugepages-2Mi":"3Mi"}},
		"livenessProbe":{"httpGet":{"port":"http"},"exec":{"command":["a"]}},"lifecycle":{"preStop":{"sleep":{"seconds":5}}},"env":[{"name":"a","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['x']"}}}]}],
		"volumes":[{"name":"v","projected":{"sources":[{"serviceAccountToken":{"path":"t"}},{"configMap":{"name":"c","items":[{"key":"k","path":"t"}]}}]}},{"name":"w","image":{"reference":"r"}}],
		"hostNetwork":true,"os":{"name":"windows"},"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{},"matchLabelKeys":["a"]}]}},
		"tolerations":[{"key":"","effect":""}],"schedulingGates":[{"name":"g"}],"dnsPolicy":"None","dnsConfig":{"nameservers":["::1"]}},
		"status":{"podIP":"1.2.3.4","podIPs":[{"ip":"fd00::1"}],"containerStatuses":[{"name":"c","state":{"terminated":{"exitCode":0}}}]}}`))
	f.Add([]byte(`{"template":{"metadata":{"labels":{"a":"b"}},"spec":{"initContainers":[{"name":"i","restartPolicy":"Always","startupProbe":{"grpc":{"port":1}}}],
		"ephemeralContainers":[{"name":"e","targetContainerName":"i"}]}}}`))
	f.Add([]byte(`{"spec":{"overhead":{"hugepages-18446744073709551616":"1"},"containers":[{"resources":{"requests":{"hugepages-1e30":"1e40"}}}]}}`))
	f.Add([]byte(`{"spec":{"volumes":[{"name":"v","iscsi":{"targetPortal":"p","iqn":"iqn.2001-04.com.example:storage","initiatorName":"x"},"fc":{"lun":3}}],
		"securityContext":{"seccompProfile":{"type":"Localhost"},"appArmorProfile":{"type":"Localhost","localhostProfile":" p"}}}}`))
	var pod, tmpl *registry.Descriptor
	for _, d := range coreV1(brand) {
		switch d.Kind {
		case "Pod":
			pod = d
		case "PodTemplate":
			tmpl = d
		}
	}
	catalog := testCatalog(f, brand)
	podSchema, tmplSchema := catalog.ByGVK("", "v1", "Pod"), catalog.ByGVK("", "v1", "PodTemplate")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, target := range []struct {
			d *registry.Descriptor
			s *schema.Schema
		}{{pod, podSchema}, {tmpl, tmplSchema}} {
			if obj := runWriteHooks(t, target.d, target.s, data); obj != nil {
				podDeletionGracePeriod(obj, nil)
			}
		}
	})
}
