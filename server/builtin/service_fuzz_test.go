package builtin

import (
	"testing"

	"platd/server/registry"
	"platd/server/schema"
)

// FuzzServicePipeline feeds decoded services and endpoints through every
// step of a write, allocation and claims included, and requires that none
// panics, whatever the shape of the object.
func FuzzServicePipeline(f *testing.F) {
	f.Add([]byte(`{"spec":{"ports":[{"port":80}]}}`))
	f.Add([]byte(`{"spec":{"type":"NodePort","clusterIP":"10.0.0.7","clusterIPs":["10.0.0.7","fd00::1"],"ipFamilies":["IPv6"],"ports":[{"port":80,"nodePort":30001},{"port":80,"protocol":"UDP"}]}}`))
	f.Add([]byte(`{"spec":{"type":"LoadBalancer","externalTrafficPolicy":"Local","healthCheckNodePort":1,"allocateLoadBalancerNodePorts":false,"ports":[{"port":1}]},"status":{"loadBalancer":{"ingress":[{"ip":"x","hostname":"1.2.3.4"}]}}}`))
	f.Add([]byte(`{"spec":{"clusterIP":"None","clusterIPs":["None","None"],"ipFamilyPolicy":"PreferDualStack","sessionAffinity":"ClientIP","sessionAffinityConfig":{}}}`))
	f.Add([]byte(`{"spec":{"type":"ExternalName","externalName":"a.","clusterIPs":["010.0.0.1"]}}`))
	f.Add([]byte(`{"subsets":[{"addresses":[{"ip":"::","nodeName":""}],"ports":[{"port":0},{}]}]}`))
	r := DefaultServiceRanges()
	ep := endpoints()
	svc := services(brand, r, ep)
	catalog := testCatalog(f, brand)
	svcSchema, epSchema := catalog.ByGVK("", "v1", "Service"), catalog.ByGVK("", "v1", "Endpoints")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, target := range []struct {
			d *registry.Descriptor
			s *schema.Schema
		}{{svc, svcSchema}, {ep, epSchema}} {
			runWriteHooks(t, target.d, target.s, data)
		}
	})
}
