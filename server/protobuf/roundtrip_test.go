package protobuf

import (
	"bytes"
	"reflect"
	"testing"

	"platd/config"
	"platd/server/schema"
)

// roundTrips are objects in JSON; each goes JSON → object → protobuf →
// object and must come back rendering the same JSON.
var roundTrips = []struct {
	name                 string
	group, version, kind string
	json                 string
	check                func(t *testing.T, obj map[string]any)
}{
	{name: "configmap", version: "v1", kind: "ConfigMap", json: `{"kind":"ConfigMap","apiVersion":"v1",
		"metadata":{"name":"c","namespace":"d","labels":{"b":"","a":"1"},"generation":3},
		"data":{"k":"v","":"empty key"},"binaryData":{"x":""},"immutable":false}`,
		check: func(t *testing.T, obj map[string]any) {
			if obj["immutable"] != false {
				t.Errorf("pointer false lost: %v", obj["immutable"])
			}
			if bd := obj["binaryData"].(map[string]any); bd["x"] != "" {
				t.Errorf("empty bytes value: %#v", bd)
			}
		}},
	{name: "secret", version: "v1", kind: "Secret", json: `{"kind":"Secret","apiVersion":"v1",
		"metadata":{"name":"s","annotations":{"note":"<&>"}},"type":"Opaque",
		"data":{"tls.key":"AAEC/w==","z":"aGVsbG8="}}`,
		check: func(t *testing.T, obj map[string]any) {
			if d := obj["data"].(map[string]any); d["tls.key"] != "AAEC/w==" {
				t.Errorf("data %v", d)
			}
		}},
	{name: "namespace", version: "v1", kind: "Namespace", json: `{"kind":"Namespace","apiVersion":"v1",
		"metadata":{"name":"n","deletionTimestamp":"2024-01-02T03:04:05Z","deletionGracePeriodSeconds":0},
		"spec":{"finalizers":["example.com/a","example.com/b"]},
		"status":{"phase":"Terminating","conditions":[{"type":"T","status":"True","lastTransitionTime":"2024-01-02T03:04:05Z"}]}}`,
		check: func(t *testing.T, obj map[string]any) {
			md := obj["metadata"].(map[string]any)
			if md["deletionGracePeriodSeconds"] != int64(0) || md["deletionTimestamp"] != "2024-01-02T03:04:05Z" {
				t.Errorf("metadata %v", md)
			}
		}},
	{name: "serviceaccount", version: "v1", kind: "ServiceAccount", json: `{"kind":"ServiceAccount","apiVersion":"v1",
		"metadata":{"name":"sa","ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"u","controller":true}]},
		"secrets":[{"name":"t"},{"namespace":"x","name":"y","fieldPath":"f"}],"imagePullSecrets":[{"name":"pull"}],
		"automountServiceAccountToken":false}`,
		check: func(t *testing.T, obj map[string]any) {
			if obj["automountServiceAccountToken"] != false {
				t.Errorf("automount %v", obj["automountServiceAccountToken"])
			}
		}},
	{name: "limitrange", version: "v1", kind: "LimitRange", json: `{"kind":"LimitRange","apiVersion":"v1",
		"metadata":{"name":"l"},"spec":{"limits":[{"type":"Container",
		"max":{"cpu":"2","memory":"1.5Gi"},"min":{"cpu":"100m"},"default":{"memory":"512Mi"},
		"defaultRequest":{"cpu":"0.5"},"maxLimitRequestRatio":{"cpu":"10"}}]}}`,
		check: func(t *testing.T, obj map[string]any) {
			l := obj["spec"].(map[string]any)["limits"].([]any)[0].(map[string]any)
			if m := l["max"].(map[string]any); m["memory"] != "1536Mi" || m["cpu"] != "2" {
				t.Errorf("max %v", m)
			}
			if r := l["defaultRequest"].(map[string]any); r["cpu"] != "500m" {
				t.Errorf("defaultRequest %v", r)
			}
		}},
	{name: "event", version: "v1", kind: "Event", json: `{"kind":"Event","apiVersion":"v1",
		"metadata":{"name":"e","namespace":"d","creationTimestamp":"2024-05-06T07:08:09Z"},
		"involvedObject":{"kind":"Pod","namespace":"d","name":"p","uid":"u","apiVersion":"v1","resourceVersion":"7","fieldPath":"spec.containers{c}"},
		"reason":"Started","message":"started container","source":{"component":"kubelet","host":"h"},
		"firstTimestamp":"2024-05-06T07:08:09Z","lastTimestamp":"1969-12-31T23:59:59Z","count":2,"type":"Normal",
		"eventTime":"2024-05-06T07:08:09.123456Z","series":{"count":5,"lastObservedTime":"2024-05-06T07:08:10.000001Z"},
		"action":"Start","reportingComponent":"r","reportingInstance":"i"}`,
		check: func(t *testing.T, obj map[string]any) {
			if obj["eventTime"] != "2024-05-06T07:08:09.123456Z" || obj["lastTimestamp"] != "1969-12-31T23:59:59Z" {
				t.Errorf("times %v %v", obj["eventTime"], obj["lastTimestamp"])
			}
			if s := obj["series"].(map[string]any); s["lastObservedTime"] != "2024-05-06T07:08:10.000001Z" {
				t.Errorf("series %v", s)
			}
		}},
	{name: "pod", version: "v1", kind: "Pod", json: podJSON,
		check: func(t *testing.T, obj map[string]any) {
			spec := obj["spec"].(map[string]any)
			c := spec["containers"].([]any)[0].(map[string]any)
			if p := c["livenessProbe"].(map[string]any)["httpGet"].(map[string]any)["port"]; p != int64(8080) {
				t.Errorf("int port %#v", p)
			}
			if p := c["readinessProbe"].(map[string]any)["tcpSocket"].(map[string]any)["port"]; p != "http" {
				t.Errorf("string port %#v", p)
			}
			v := spec["volumes"].([]any)[0].(map[string]any)
			if cm := v["configMap"].(map[string]any); cm["name"] != "cfg" || cm["defaultMode"] != int64(420) {
				t.Errorf("inline volume source %v", v)
			}
			g := spec["securityContext"].(map[string]any)["supplementalGroups"].([]any)
			if !reflect.DeepEqual(g, []any{int64(1000), int64(-1), int64(0)}) {
				t.Errorf("groups %v", g)
			}
		}},
	{name: "tokenreview extra", group: "authentication", version: "v1", kind: "TokenReview", json: `{
		"metadata":{},"spec":{"token":"t","audiences":["a"]},
		"status":{"authenticated":true,"user":{"username":"u","groups":["g1","g2"],"extra":{"scopes":["x","y"],"none":[]}}}}`,
		check: func(t *testing.T, obj map[string]any) {
			ex := obj["status"].(map[string]any)["user"].(map[string]any)["extra"].(map[string]any)
			if !reflect.DeepEqual(ex["scopes"], []any{"x", "y"}) {
				t.Errorf("extra %v", ex)
			}
		}},
	{name: "crd", group: "apiextensions", version: "v1", kind: "CustomResourceDefinition", json: crdJSON,
		check: func(t *testing.T, obj map[string]any) {
			v := obj["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
			props := v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)
			if ap := props["m"].(map[string]any)["additionalProperties"]; ap != false {
				t.Errorf("additionalProperties %v", ap)
			}
			if it := props["l"].(map[string]any)["items"].(map[string]any); it["type"] != "integer" {
				t.Errorf("items %v", it)
			}
			if d := props["o"].(map[string]any)["default"].(map[string]any); d["a"] != int64(1) {
				t.Errorf("default %v", d)
			}
		}},
}

const podJSON = `{"kind":"Pod","apiVersion":"v1",
	"metadata":{"name":"p","namespace":"d","uid":"u","resourceVersion":"9","creationTimestamp":"2024-01-01T00:00:00Z",
		"labels":{"app":"web"},"finalizers":["f"],
		"managedFields":[{"manager":"m","operation":"Apply","apiVersion":"v1","time":"2024-01-01T00:00:00Z",
		"fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{}}}}}}]},
	"spec":{
		"containers":[{"name":"c","image":"img:1","command":["sh","-c",""],"args":["a"],
			"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],
			"env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
			"resources":{"limits":{"cpu":"1","memory":"128Mi"},"requests":{"cpu":"250m"}},
			"livenessProbe":{"httpGet":{"path":"/healthz","port":8080,"scheme":"HTTP"},"initialDelaySeconds":3,"periodSeconds":10},
			"readinessProbe":{"tcpSocket":{"port":"http"}},
			"volumeMounts":[{"name":"v","mountPath":"/etc/v","readOnly":true}],
			"securityContext":{"runAsNonRoot":true,"capabilities":{"drop":["ALL"]}}}],
		"volumes":[{"name":"v","configMap":{"name":"cfg","items":[{"key":"k","path":"p"}],"defaultMode":420}},
			{"name":"e","emptyDir":{"sizeLimit":"1Gi"}}],
		"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",
		"nodeSelector":{"zone":"a"},"serviceAccountName":"default",
		"securityContext":{"runAsUser":1000,"supplementalGroups":[1000,-1,0],"fsGroup":2000},
		"tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule","tolerationSeconds":60}],
		"priority":0,"enableServiceLinks":true},
	"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2024-01-01T00:00:05Z"}],
		"hostIP":"10.0.0.1","podIP":"10.1.0.2","podIPs":[{"ip":"10.1.0.2"}],"startTime":"2024-01-01T00:00:01Z",
		"containerStatuses":[{"name":"c","state":{"running":{"startedAt":"2024-01-01T00:00:02Z"}},"ready":true,"restartCount":0,"image":"img:1","imageID":"","started":true}],
		"qosClass":"Burstable"}}`

const crdJSON = `{"metadata":{"name":"things.example.com"},
	"spec":{"group":"example.com","names":{"plural":"things","kind":"Thing"},"scope":"Namespaced",
	"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
		"properties":{
			"m":{"type":"object","additionalProperties":false},
			"s":{"type":"object","additionalProperties":{"type":"string"}},
			"l":{"type":"array","items":{"type":"integer","minimum":-1.5,"maximum":10}},
			"t":{"type":"array","items":[{"type":"string"},{"type":"number"}]},
			"o":{"type":"object","default":{"a":1,"b":[true,null,"x",2.5]},"x-kubernetes-preserve-unknown-fields":true,
				"dependencies":{"a":["b","c"],"d":{"required":["e"]}}},
			"i":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]}}}}}]}}`

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range roundTrips {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			group := tc.group
			if group != "" && group != "apps" && group != "batch" {
				b, _ := config.LookupBrand("plat")
				group = b.Group(group)
			}
			s := kindSchema(t, group, tc.version, tc.kind)
			dec, err := schema.Decode([]byte(tc.json), s)
			if err != nil {
				t.Fatal(err)
			}
			if len(dec.Unknown) > 0 {
				t.Fatalf("fixture has unknown members %v", dec.Unknown)
			}
			pb, err := Marshal(nil, dec.Object, s)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Unmarshal(pb, s)
			if err != nil {
				t.Fatal(err)
			}
			wantJSON := schema.Encode(nil, dec.Object, s)
			gotJSON := schema.Encode(nil, withType(back, dec.Object), s)
			if !bytes.Equal(gotJSON, wantJSON) {
				t.Fatalf("round trip changed the object\n got %s\nwant %s", gotJSON, wantJSON)
			}
			again, err := Marshal(nil, back, s)
			if err != nil || !bytes.Equal(again, pb) {
				t.Fatalf("second marshal: %v\n got %x\nwant %x", err, again, pb)
			}
			tc.check(t, back)
		})
	}
}

// withType copies kind and apiVersion, which protobuf leaves to the
// envelope, from the original.
func withType(obj, orig map[string]any) map[string]any {
	for _, k := range []string{"kind", "apiVersion"} {
		if v, ok := orig[k]; ok {
			obj[k] = v
		}
	}
	return obj
}
