package protobuf

import (
	"bytes"
	"errors"
	"testing"

	"platd/config"
	"platd/server/schema"
)

// transcodeKinds are the schemas the differential tests run every input
// against: flat maps, bytes, inline members, int-or-string, quantities,
// times and micro times, raw extensions, durations, and the
// JSONSchemaProps unions the transcoder leaves to Marshal.
var transcodeKinds = []struct{ group, version, kind string }{
	{"", "v1", "ConfigMap"},
	{"", "v1", "Secret"},
	{"", "v1", "Pod"},
	{"", "v1", "Event"},
	{"", "v1", "LimitRange"},
	{"", "v1", "Namespace"},
	{"", "v1", "ServiceAccount"},
	{"apps", "v1", "ControllerRevision"},
	{"apps", "v1", "Deployment"},
	{"coordination", "v1", "Lease"},
	{"authentication", "v1", "TokenReview"},
	{"apiextensions", "v1", "CustomResourceDefinition"},
	{"admissionregistration", "v1", "ValidatingWebhookConfiguration"},
	{"flowcontrol.apiserver", "v1", "FlowSchema"},
}

func transcodeSchemas(t testing.TB) []*schema.Schema {
	b, _ := config.LookupBrand("plat")
	out := make([]*schema.Schema, len(transcodeKinds))
	for i, k := range transcodeKinds {
		g := k.group
		if g != "" && g != "apps" && g != "batch" {
			g = b.Group(g)
		}
		out[i] = kindSchema(t, g, k.version, k.kind)
	}
	return out
}

// transcodeInputs are documents beyond the round-trip fixtures: stored
// forms and every way a document may differ from one.
var transcodeInputs = []string{
	`null`,
	`{}`,
	`[]`,
	`"x"`,
	`{"metadata":null,"data":null}`,
	`{"metadata":{"name":"a"},"data":{"b":"2","a":"1"}}`,
	`{"metadata":{"name":"a"},"data":{"a":"1","a":"2"}}`,
	`{"metadata":{"name":"a","name":"b"}}`,
	`{"metadata":{"na\u006de":"esc"},"data":{"k\u00e9":"v\u00e9","z":"\ud800","\"q":"a\nb"}}`,
	`{"metadata":{"name":"\xff\xfe"},"data":{"\xff":"\xc3"}}`,
	`{"metadata":{"labels":{"a":null,"b":""}},"data":{"x":null}}`,
	`{"kind":3,"metadata":{}}`,
	`{"kind":"ConfigMap","apiVersion":null,"metadata":{}}`,
	`{"metadata":{"generation":1.0}}`,
	`{"metadata":{"generation":-0}}`,
	`{"metadata":{"generation":99999999999999999999}}`,
	`{"metadata":{"generation":-9223372036854775808}}`,
	`{"metadata":{"generation":"1"}}`,
	`{"metadata":{"creationTimestamp":"2024-01-01T01:00:00+01:00"}}`,
	`{"metadata":{"creationTimestamp":"0001-01-01T00:00:00Z"}}`,
	`{"metadata":{"creationTimestamp":"0000-01-01T00:00:00Z"}}`,
	`{"metadata":{"creationTimestamp":"0000-01-01T00:30:00+01:00"}}`,
	`{"metadata":{"creationTimestamp":"9999-12-31T23:59:59-01:00"}}`,
	`{"metadata":{"creationTimestamp":"2024-02-30T00:00:00Z"}}`,
	`{"metadata":{"creationTimestamp":"2024-02-29T24:00:00Z"}}`,
	`{"metadata":{"creationTimestamp":"2023-12-31T23:59:60Z"}}`,
	`{"metadata":{"creationTimestamp":"2024-01-01T00:00:00.999999999Z"}}`,
	`{"metadata":{"creationTimestamp":"2024-01-01t00:00:00z"}}`,
	`{"metadata":{"creationTimestamp":"2024-01-01T00:00:00\u005a"}}`,
	`{"metadata":{"creationTimestamp":null,"deletionTimestamp":"x"}}`,
	`{"metadata":{"managedFields":[{"time":"2024-01-01T00:00:00Z","fieldsV1":{"f:b":{},"f:a":{".":{}}}}]}}`,
	`{"metadata":{"managedFields":[{"fieldsV1":{"k:{\"name\":\"c\"}":{"f:x":{}},"f:a":{"<":[1,-2,3.5,1e2,-0,true,null,"\u003c"]}}}]}}`,
	`{"metadata":{"managedFields":[{"fieldsV1":{ "a" : 1 }},{"fieldsV1":"s"},{"fieldsV1":12345678901234567890},{"fieldsV1":1e999}]}}`,
	`{"metadata":{"managedFields":[{"fieldsV1":{"a":1,"a":2}},null,{"fieldsV1":{"\u0062":1,"a":2}}]}}`,
	`{"metadata":{"managedFields":[{"fieldsV1":{"b\\":1,"b\"":2,"b\n":3}}]}}`,
	`{"metadata":{"ownerReferences":[{"name":"o","controller":false,"blockOwnerDeletion":null},null]}}`,
	`{"metadata":{"finalizers":["a",null,"b"]}}`,
	`{"metadata":{"finalizers":["a",1]}}`,
	`{"binaryData":{"a":"AAEC/w==","b":"AA\nEC","c":null,"d":"!!"},"immutable":true}`,
	`{"data":{"a":"A A"},"type":"Opaque","immutable":null}`,
	`{"spec":{"limits":[{"max":{"cpu":"0.5","memory":1024,"x":"1e3","y":"1.5Gi"},"min":{"cpu":"bad"}}]}}`,
	`{"spec":{"limits":[{"max":{"cpu":null}}]}}`,
	`{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}],"livenessProbe":{"httpGet":{"port":"http"},"periodSeconds":3},
		"readinessProbe":{"tcpSocket":{"port":8080}},"startupProbe":{"grpc":{"port":1}}}],
		"volumes":[{"name":"v","configMap":{"name":"c"}},{"name":"w","hostPath":{"path":"/"},"secret":{"secretName":"s"}}],
		"overhead":{"cpu":"1"},"affinity":null}}`,
	`{"spec":{"containers":[{"livenessProbe":{"httpGet":{"port":2147483648}}}]}}`,
	`{"spec":{"containers":[{"livenessProbe":{"httpGet":{"port":1.5}}}]}}`,
	`{"spec":{"containers":[{"livenessProbe":{"httpGet":{"port":true}}}]}}`,
	`{"spec":{"replicas":3,"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}},
		"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[]}},"progressDeadlineSeconds":2147483648}}`,
	`{"spec":{"replicas":3,"selector":{"matchLabels":{"a":"b"}}}}`,
	`{"spec":{"holderIdentity":"h","leaseDurationSeconds":15,"acquireTime":"2024-01-01T00:00:00.123456Z",
		"renewTime":"2024-01-01T00:00:00.1234567Z","leaseTransitions":2}}`,
	`{"spec":{"renewTime":"2024-01-01T00:00:00Z","acquireTime":"2024-01-01T00:00:00.000000+02:00"}}`,
	`{"data":{"kind":"Pod","spec":{"b":1,"a":[]}},"revision":2}`,
	`{"data":null,"revision":2}`,
	`{"eventTime":"2024-05-06T07:08:09.123456Z","series":{"count":5,"lastObservedTime":null},"count":-1}`,
	`{"status":{"user":{"extra":{"a":["x",null],"b":null,"c":[]}}}}`,
	`{"webhooks":[{"name":"w","timeoutSeconds":5,"rules":[{"operations":["CREATE"],"apiGroups":["*"],"scope":"*"}],"matchConditions":[{"name":"n","expression":"true"}]}]}`,
	`{"spec":{"matchingPrecedence":1,"distinguisherMethod":{"type":"ByUser"},"rules":[{"subjects":[{"kind":"User","user":{"name":"u"}}]}]}}`,
	`{"spec":{"versions":[{"name":"v1","schema":{"openAPIV3Schema":{"type":"object"}}}]}}`,
	`{"metadata":{}} x`,
	`{"metadata":{},}`,
	`{"metadata":{"name":"a\tb"}}`,
	`{"metadata":{"name":"a\qb"}}`,
	` { "metadata" : { "name" : "a" } , "data" : { "b" : "1" , "a" : "2" } } `,
}

// transcodeDiff checks one input: Transcode agrees with Decode then
// Marshal, or declines with ErrUnsupported where they succeed.
func transcodeDiff(t *testing.T, s *schema.Schema, data []byte) {
	t.Helper()
	var want []byte
	dec, werr := schema.Decode(data, s)
	if werr == nil {
		want, werr = Marshal([]byte("prefix"), dec.Object, s)
	}
	got, gerr := Transcode([]byte("prefix"), data, s)
	switch {
	case gerr == nil && werr == nil:
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: %s\nTranscode %x\nMarshal   %x", s.Name, data, got, want)
		}
	case gerr == nil:
		t.Fatalf("%s: %s\nTranscode accepts what Decode/Marshal reject (%v): %x", s.Name, data, werr, got)
	case werr == nil && !errors.Is(gerr, ErrUnsupported):
		t.Fatalf("%s: %s\nTranscode fails (%v) where Decode/Marshal succeed", s.Name, data, gerr)
	}
}

func transcodeSeeds() []string {
	seeds := append([]string{podJSON, crdJSON}, transcodeInputs...)
	for _, tc := range roundTrips {
		seeds = append(seeds, tc.json)
	}
	return seeds
}

// TestTranscodeMatchesMarshal runs every fixture and edge case against
// every schema.
func TestTranscodeMatchesMarshal(t *testing.T) {
	t.Parallel()
	schemas := transcodeSchemas(t)
	seeds := append(transcodeSeeds(), string(readTestdata(t, "configmap-get.json")))
	for _, s := range schemas {
		for _, in := range seeds {
			transcodeDiff(t, s, []byte(in))
		}
	}
}

// TestTranscodeStored: the stored forms of the fixtures, which the
// transcoder exists for, never fall back.
func TestTranscodeStored(t *testing.T) {
	t.Parallel()
	b, _ := config.LookupBrand("plat")
	fixtures := append([]struct {
		name                 string
		group, version, kind string
		json                 string
	}{{name: "configmap-get", version: "v1", kind: "ConfigMap", json: string(readTestdata(t, "configmap-get.json"))}}, nil...)
	for _, tc := range roundTrips {
		fixtures = append(fixtures, struct {
			name                 string
			group, version, kind string
			json                 string
		}{tc.name, tc.group, tc.version, tc.kind, tc.json})
	}
	for _, tc := range fixtures {
		if tc.kind == "CustomResourceDefinition" {
			continue // JSONSchemaProps unions are Marshal's
		}
		g := tc.group
		if g != "" && g != "apps" && g != "batch" {
			g = b.Group(g)
		}
		s := kindSchema(t, g, tc.version, tc.kind)
		dec, err := schema.Decode([]byte(tc.json), s)
		if err != nil {
			t.Fatal(err)
		}
		stored := schema.Encode(nil, dec.Object, s)
		want, err := Marshal(nil, dec.Object, s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Transcode(nil, stored, s)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %v\n got %x\nwant %x", tc.name, err, got, want)
		}
	}
}

// TestTranscodeGolden: the captured upstream ConfigMap comes out of its
// JSON twin byte for byte.
func TestTranscodeGolden(t *testing.T) {
	t.Parallel()
	s := kindSchema(t, "", "v1", "ConfigMap")
	_, _, raw := unwrap(t, readTestdata(t, "configmap-get.pb"))
	got, err := Transcode(nil, readTestdata(t, "configmap-get.json"), s)
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("%v\n got %x\nwant %x", err, got, raw)
	}
}

// FuzzTranscode: for any input and schema, Transcode agrees with Decode
// then Marshal, or declines with ErrUnsupported.
func FuzzTranscode(f *testing.F) {
	schemas := transcodeSchemas(f)
	for i, in := range transcodeSeeds() {
		f.Add(uint8(i), []byte(in))
	}
	f.Add(uint8(0), readTestdata(f, "configmap-get.json"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		transcodeDiff(t, schemas[int(which)%len(schemas)], data)
	})
}
