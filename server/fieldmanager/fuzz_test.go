package fieldmanager

import (
	"testing"

	"sigs.k8s.io/yaml"

	"platd/server/schema"
)

// FuzzFieldsToSet feeds arbitrary JSON to the FieldsV1 decoder: it
// decodes or fails, never panics, and what it decodes encodes back to
// the same set.
func FuzzFieldsToSet(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `[]`, `"x"`,
		`{"f:data":{".":{},"f:k":{}}}`,
		`{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{}}}}}`,
		`{"f:metadata":{"f:finalizers":{"v:\"a\"":{},"v:1":{},"v:null":{}}}}`,
		`{"f:l":{"i:0":{},"i:12":{}}}`,
		`{"f:p":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{}}}`,
		`{"x:y":{},"f:":{},".":{}}`,
		`{"k:{":{}}`, `{"v:":{}}`, `{"i:-1":{}}`, `{"i:x":{}}`, `{"f:a":{"f:b":{"f:c":1}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := schema.DecodeAny(data)
		if err != nil {
			return
		}
		set, err := FieldsToSet(v)
		if err != nil {
			return
		}
		js, err := set.ToJSON()
		if err != nil {
			t.Fatalf("a decoded set does not encode: %v", err)
		}
		back, err := schema.DecodeAny(js)
		if err != nil {
			t.Fatalf("encoded set %s is not JSON: %v", js, err)
		}
		again, err := FieldsToSet(back)
		if err != nil {
			t.Fatalf("encoded set %s does not decode: %v", js, err)
		}
		if !again.Equals(set) {
			t.Fatalf("round trip of %s changed the set:\n%v\nto\n%v", data, set, again)
		}
	})
}

// FuzzApply applies arbitrary YAML configurations to a ConfigMap owned
// by an updater and an applier: each merges or fails, never panics, and
// a merge's ownership reads back.
func FuzzApply(f *testing.F) {
	c := &clock{}
	c.set(0)
	r := tracker(f, c, "", "v1", "ConfigMap", "")
	live := object(f, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns","labels":{"a":"1"},"annotations":{"`+
		r.o.LastApplied+`":"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"k\":\"v\"}}"}},"data":{"k":"v"},"binaryData":{"b":"AA=="}}`)
	r.Update(nil, live, "creator")
	live, err := r.Apply(live, object(f, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"j":"w"}}`), "ap", false)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  k: w\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n    a: \"2\"\n  finalizers: [a, b]\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  ownerReferences:\n  - uid: u\n    name: n\n    kind: K\n    apiVersion: v1\n",
		"apiVersion: v1\nkind: ConfigMap\ndata:\n  j: 1\n",
		"apiVersion: v1\nkind: ConfigMap\nimmutable: true\nspec: {}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  finalizers: [a, a]\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: []\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: null\ndata: null\n",
		"apiVersion: v1\nkind: Secret\n",
		"{}",
	} {
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, force bool) {
		js, err := yaml.YAMLToJSON(body)
		if err != nil {
			return
		}
		v, err := schema.DecodeAny(js)
		if err != nil {
			return
		}
		config, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, manager := range []string{"m", "kubectl"} {
			out, err := r.Apply(live, config, manager, force)
			if err != nil {
				continue
			}
			list, _ := metadata(out)["managedFields"].([]any)
			if _, err := Decode(list); err != nil {
				t.Fatalf("apply of %s recorded unreadable ownership: %v", js, err)
			}
		}
	})
}

// FuzzUpdateManagedFields writes a ConfigMap whose body carries arbitrary
// JSON as its managedFields: the write is tracked from it, from the live
// entries or not at all, never panics, and what it records reads back.
func FuzzUpdateManagedFields(f *testing.F) {
	c := &clock{}
	c.set(0)
	r := tracker(f, c, "", "v1", "ConfigMap", "")
	live := object(f, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1"}}`)
	r.Update(nil, live, "creator")
	for _, seed := range []string{
		`[]`, `[{}]`, `null`, `"x"`, `[1]`, `[{},{}]`,
		`[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}},"time":"2025-01-01T00:00:00Z"}]`,
		`[{"manager":"m","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:zz":{}}},"subresource":"status"}]`,
		`[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"k:{\"a\":1}":{}}}}]`,
		`[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","time":"yesterday"}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mf, err := schema.DecodeAny(data)
		if err != nil {
			return
		}
		next := object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"2","b":"1"}}`)
		metadata(next)["managedFields"] = mf
		r.Update(live, next, "editor")
		list, _ := metadata(next)["managedFields"].([]any)
		if _, err := Decode(list); err != nil {
			t.Fatalf("recorded unreadable ownership from %s: %v", data, err)
		}
	})
}

// FuzzApplyDeployment applies arbitrary YAML configurations to a tracked
// Deployment, whose schema has map lists of one and two keys, sets,
// atomic structs and int-or-strings: each merges or fails, never panics.
func FuzzApplyDeployment(f *testing.F) {
	c := &clock{}
	c.set(0)
	r := tracker(f, c, "apps", "v1", "Deployment", "")
	live := object(f, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","finalizers":["f"]},"spec":{"replicas":1,`+
		`"selector":{"matchLabels":{"a":"b"}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%"}},`+
		`"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","env":[{"name":"E","value":"1"},{"name":"E","value":"2"}],`+
		`"ports":[{"containerPort":80},{"containerPort":53,"protocol":"UDP"}]}]}}}}`)
	r.Update(nil, live, "creator")
	for _, seed := range []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: 3\n",
		"apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: j\n        ports:\n        - containerPort: 80\n          protocol: TCP\n",
		"apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: d\n        env:\n        - name: E\n          value: x\n",
		"apiVersion: apps/v1\nkind: Deployment\nspec:\n  selector:\n    matchExpressions:\n    - {key: a, operator: In, values: [b]}\n",
		"apiVersion: apps/v1\nkind: Deployment\nspec:\n  strategy:\n    rollingUpdate:\n      maxSurge: 2\n      maxUnavailable: [1]\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  finalizers: [f, g]\nspec:\n  template:\n    spec:\n      containers: []\n",
		"apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - {}\n      - name: c\n        ports: [{}]\n",
	} {
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, force bool) {
		js, err := yaml.YAMLToJSON(body)
		if err != nil {
			return
		}
		v, err := schema.DecodeAny(js)
		if err != nil {
			return
		}
		config, ok := v.(map[string]any)
		if !ok {
			return
		}
		out, err := r.Apply(live, config, "m", force)
		if err != nil {
			return
		}
		list, _ := metadata(out)["managedFields"].([]any)
		if _, err := Decode(list); err != nil {
			t.Fatalf("apply of %s recorded unreadable ownership: %v", js, err)
		}
	})
}
