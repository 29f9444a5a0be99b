package builtin

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzAdmissionFlowControlPipeline feeds decoded objects of the admission
// and flow control types through every step a write runs and requires
// that none panics, whatever the shape of the object.
func FuzzAdmissionFlowControlPipeline(f *testing.F) {
	f.Add([]byte(`{"webhooks":[{"name":"a.b.c","clientConfig":{"url":"https://x/%zz","service":{"path":"//"}},"rules":[{"operations":["*","X"],"resources":["*/*","a/*","a/b","*"]}],
		"matchConditions":[{"name":"","expression":" "}],"namespaceSelector":{"matchExpressions":[{"operator":"Foo"}]},"timeoutSeconds":0}]}`))
	f.Add([]byte(`{"spec":{"paramKind":{"apiVersion":"/"},"matchConstraints":{"resourceRules":[{"resourceNames":[".."]}],"excludeResourceRules":[{}]},
		"validations":[{"message":"\n"}],"auditAnnotations":[{"key":"k"}],"variables":[{"name":"1"}],"policyName":"p","validationActions":["Deny","Warn"],
		"paramRef":{"selector":{"matchLabels":{"a":"b"}}},"matchResources":{}},"status":{"typeChecking":{"expressionWarnings":[{}]},"conditions":[{}]}}`))
	f.Add([]byte(`{"metadata":{"name":"exempt"},"spec":{"type":"Exempt","exempt":{},"limited":{"limitResponse":{"type":"Queue","queuing":{"queues":1,"handSize":60}}},
		"matchingPrecedence":1,"distinguisherMethod":{},"rules":[{"subjects":[{"kind":"ServiceAccount"},{"kind":"User","user":{}}],
		"resourceRules":[{"namespaces":["*","x"]}],"nonResourceRules":[{"nonResourceURLs":["/*x","/a*"]}]}]},"status":{"conditions":[{},{}]}}`))
	catalog := testCatalog(f, brand)
	levels, schemas := FlowControlBootstrap(brand)
	for _, o := range slices.Concat(levels, schemas) {
		raw, err := json.Marshal(o)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	descs := slices.Concat(admissionRegistrationV1(brand), flowControlV1(brand))
	for _, d := range descs {
		d.Schema = catalog.ByGVK(d.Group, d.Version, d.Kind)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range descs {
			runWriteHooks(t, d, d.Schema, data)
		}
	})
}
