package patch

import (
	"fmt"
	"testing"

	"platd/server/apierr"
	"platd/server/schema"
)

type smpCase struct {
	name, original, patch, want string
}

func runSMP(t *testing.T, s *schema.Schema, cases []smpCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, err := StrategicMergeBytes([]byte(c.original), []byte(c.patch), s)
			if err != nil {
				t.Fatalf("StrategicMergeBytes: %v", err)
			}
			if got, want := canonical(t, out), canonical(t, []byte(c.want)); got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestStrategicMergeMaps(t *testing.T) {
	t.Parallel()
	const cm = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","labels":{"a":"1","b":"2"}},"data":{"k":"v"}}`
	runSMP(t, testSchema(t, "ConfigMap"), []smpCase{
		{"merge members", cm, `{"data":{"n":"w"},"metadata":{"labels":{"c":"3"}}}`,
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","labels":{"a":"1","b":"2","c":"3"}},"data":{"k":"v","n":"w"}}`},
		{"null deletes", cm, `{"metadata":{"labels":{"a":null}},"data":null}`,
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","labels":{"b":"2"}}}`},
		{"null of absent member is dropped", cm, `{"binaryData":null,"metadata":{"annotations":{"x":null,"y":"1"}}}`,
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","labels":{"a":"1","b":"2"},"annotations":{"y":"1"}},"data":{"k":"v"}}`},
		{"$patch replace on map", cm, `{"metadata":{"labels":{"$patch":"replace","z":"9"}}}`,
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","labels":{"z":"9"}},"data":{"k":"v"}}`},
		{"$patch delete on map", cm, `{"metadata":{"labels":{"$patch":"delete"}}}`,
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","labels":{}},"data":{"k":"v"}}`},
		{"$patch map on absent member is dropped", cm, `{"metadata":{"annotations":{"$patch":"replace","q":"1"}}}`, cm},
		{"$patch replace at top", cm, `{"$patch":"replace","kind":"ConfigMap","data":{"only":"x"}}`,
			`{"kind":"ConfigMap","data":{"only":"x"}}`},
		{"$retainKeys", cm, `{"metadata":{"labels":{"$retainKeys":["b","c"],"c":"3"}}}`,
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","labels":{"b":"2","c":"3"}},"data":{"k":"v"}}`},
		{"scalar replaced by map", cm, `{"data":{"k":{"deep":1}}}`,
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","labels":{"a":"1","b":"2"}},"data":{"k":{"deep":1}}}`},
		{"null patch", cm, `null`, cm},
		{"unknown member taken as is", cm, `{"spec":{"x":1}}`,
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","labels":{"a":"1","b":"2"}},"data":{"k":"v"},"spec":{"x":1}}`},
	})
}

const pod = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","finalizers":["a","b","c"]},
"spec":{"containers":[{"name":"a","image":"ia","args":["1","2"],"env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}],"ports":[{"containerPort":80}]},
{"name":"b","image":"ib"}],"volumes":[{"name":"v","emptyDir":{}}]}}`

// podWith builds the expected pod from its parts.
func podWith(finalizers, containers, volumes string) string {
	return `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","finalizers":` + finalizers + `},"spec":{"containers":` + containers + `,"volumes":` + volumes + `}}`
}

const (
	podA       = `{"name":"a","image":"ia","args":["1","2"],"env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}],"ports":[{"containerPort":80}]}`
	podB       = `{"name":"b","image":"ib"}`
	podVolumes = `[{"name":"v","emptyDir":{}}]`
	podFins    = `["a","b","c"]`
)

func TestStrategicMergeLists(t *testing.T) {
	t.Parallel()
	runSMP(t, testSchema(t, "Pod"), []smpCase{
		{"merge by key, new appended", pod, `{"spec":{"containers":[{"name":"b","image":"ib2"},{"name":"c","image":"ic"}]}}`,
			podWith(podFins, `[`+podA+`,{"name":"b","image":"ib2"},{"name":"c","image":"ic"}]`, podVolumes)},
		{"patch order wins for named items", pod, `{"spec":{"containers":[{"name":"b"},{"name":"a"}]}}`,
			podWith(podFins, `[`+podB+`,`+podA+`]`, podVolumes)},
		{"nested merge list", pod, `{"spec":{"containers":[{"name":"a","env":[{"name":"Y","value":"3"},{"name":"Z","value":"4"}]}]}}`,
			podWith(podFins, `[{"name":"a","image":"ia","args":["1","2"],"env":[{"name":"X","value":"1"},{"name":"Y","value":"3"},{"name":"Z","value":"4"}],"ports":[{"containerPort":80}]},`+podB+`]`, podVolumes)},
		{"integer merge key", pod, `{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"name":"http"},{"containerPort":443}]}]}}`,
			podWith(podFins, `[{"name":"a","image":"ia","args":["1","2"],"env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}],"ports":[{"containerPort":80,"name":"http"},{"containerPort":443}]},`+podB+`]`, podVolumes)},
		{"list without strategy replaced", pod, `{"spec":{"containers":[{"name":"a","args":["9"]}]}}`,
			podWith(podFins, `[{"name":"a","image":"ia","args":["9"],"env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}],"ports":[{"containerPort":80}]},`+podB+`]`, podVolumes)},
		{"$patch delete item", pod, `{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}`,
			podWith(podFins, `[`+podB+`]`, podVolumes)},
		{"$patch replace list", pod, `{"spec":{"containers":[{"$patch":"replace"},{"name":"z","image":"iz"}]}}`,
			podWith(podFins, `[{"name":"z","image":"iz"}]`, podVolumes)},
		{"null member of item deletes", pod, `{"spec":{"containers":[{"name":"b","image":null}]}}`,
			podWith(podFins, `[`+podA+`,{"name":"b"}]`, podVolumes)},
		{"primitive list union", pod, `{"metadata":{"finalizers":["c","d"]}}`,
			podWith(`["a","b","c","d"]`, `[`+podA+`,`+podB+`]`, podVolumes)},
		{"$deleteFromPrimitiveList", pod, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["b","zz"]}}`,
			podWith(`["a","c"]`, `[`+podA+`,`+podB+`]`, podVolumes)},
		{"delete list and additions together", pod, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"],"finalizers":["e"]}}`,
			podWith(`["e","b","c"]`, `[`+podA+`,`+podB+`]`, podVolumes)},
		{"items only the patch names go first", pod, `{"metadata":{"finalizers":["x"]},"spec":{"containers":[{"name":"n"}]}}`,
			podWith(`["x","a","b","c"]`, `[{"name":"n"},`+podA+`,`+podB+`]`, podVolumes)},
		{"$setElementOrder alone", pod, `{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}]}}`,
			podWith(podFins, `[`+podB+`,`+podA+`]`, podVolumes)},
		{"$setElementOrder with additions", pod,
			`{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"n"},{"name":"a"}],"containers":[{"name":"n","image":"in"}]}}`,
			podWith(podFins, `[`+podB+`,{"name":"n","image":"in"},`+podA+`]`, podVolumes)},
		{"$setElementOrder of primitives", pod, `{"metadata":{"$setElementOrder/finalizers":["c","a","b"]}}`,
			podWith(`["c","a","b"]`, `[`+podA+`,`+podB+`]`, podVolumes)},
		{"$setElementOrder naming only some", pod, `{"metadata":{"$setElementOrder/finalizers":["c","a"]}}`,
			podWith(`["b","c","a"]`, `[`+podA+`,`+podB+`]`, podVolumes)},
		{"$retainKeys in merged item", pod,
			`{"spec":{"volumes":[{"name":"v","$retainKeys":["name","hostPath"],"hostPath":{"path":"/x"}}]}}`,
			podWith(podFins, `[`+podA+`,`+podB+`]`, `[{"name":"v","hostPath":{"path":"/x"}}]`)},
		{"new list with directives cleaned", `{"kind":"Pod","spec":{}}`,
			`{"spec":{"containers":[{"name":"a","image":null},{"name":"gone","$patch":"delete"}]}}`,
			`{"kind":"Pod","spec":{"containers":[{"name":"a"}]}}`},
		{"numbers keep their kind", `{"spec":{"activeDeadlineSeconds":5}}`, `{"spec":{"activeDeadlineSeconds":30,"x":1.5,"big":12345678901234}}`,
			`{"spec":{"activeDeadlineSeconds":30,"x":1.5,"big":12345678901234}}`},
	})
}

func TestStrategicMergeFreeForm(t *testing.T) {
	t.Parallel()
	runSMP(t, nil, []smpCase{
		{"maps merge, lists replace", `{"a":{"b":1,"c":[1,2]},"d":[{"name":"x"}]}`, `{"a":{"c":[3],"e":null},"d":[{"name":"y"}]}`,
			`{"a":{"b":1,"c":[3]},"d":[{"name":"y"}]}`},
		{"directives apply", `{"a":{"b":1,"c":2}}`, `{"a":{"$patch":"replace","z":1}}`, `{"a":{"z":1}}`},
		{"unknown fields fine", `{"x":{"y":{"z":1}}}`, `{"x":{"y":{"w":2}}}`, `{"x":{"y":{"w":2,"z":1}}}`},
	})
}

func TestStrategicMergeErrors(t *testing.T) {
	t.Parallel()
	podSchema := testSchema(t, "Pod")
	cases := []struct {
		name, original, patch string
		s                     *schema.Schema
		code                  int
		reason                apierr.Reason
		message               string
		kind                  error
	}{
		{"patch not an object", pod, `[1]`, podSchema, 400, apierr.ReasonBadRequest,
			"json: cannot unmarshal array into Go value of type map[string]interface {}", ErrMalformed},
		{"patch truncated", pod, `{"spec":`, podSchema, 400, apierr.ReasonBadRequest, "unexpected end of JSON input", ErrMalformed},
		{"patch trailing data", pod, `{} {}`, podSchema, 400, apierr.ReasonBadRequest,
			"invalid character '{' after top-level value", ErrMalformed},
		{"original not an object", `[]`, `{}`, podSchema, 400, apierr.ReasonBadRequest, "invalid JSON document", ErrDocument},
		{"number out of range", pod, `{"spec":{"x":1e400}}`, podSchema, 400, apierr.ReasonBadRequest,
			"json: cannot unmarshal number 1e400 into Go value of type float64", ErrMalformed},
		{"unknown $patch on map", pod, `{"metadata":{"$patch":"frob"}}`, podSchema, 500, apierr.ReasonUnknown,
			"unknown patch type: frob in map: map[$patch:frob]", ErrStrategic},
		{"unknown $patch in list", pod, `{"spec":{"containers":[{"name":"a","$patch":"frob"}]}}`, podSchema, 500, apierr.ReasonUnknown,
			"unknown patch type: frob in map: map[$patch:frob name:a]", ErrStrategic},
		{"$patch merge in list", pod, `{"spec":{"containers":[{"$patch":"merge"}]}}`, podSchema, 500, apierr.ReasonUnknown,
			"merging lists cannot yet be specified in the patch", ErrStrategic},
		{"item without merge key", pod, `{"spec":{"containers":[{"image":"x"}]}}`, podSchema, 500, apierr.ReasonUnknown,
			"map: map[image:x] does not contain declared merge key: name", ErrStrategic},
		{"delete item without merge key", pod, `{"spec":{"containers":[{"$patch":"delete"}]}}`, podSchema, 500, apierr.ReasonUnknown,
			"map: map[$patch:delete] does not contain declared merge key: name", ErrStrategic},
		{"mixed item types", pod, `{"metadata":{"finalizers":[1]}}`, podSchema, 500, apierr.ReasonUnknown,
			"list element types are not identical: [[a b c] [1]]", ErrStrategic},
		{"list of lists", `{"metadata":{"finalizers":[]}}`, `{"metadata":{"finalizers":[["x"]]}}`, podSchema, 422, apierr.ReasonInvalid,
			rejectedMessage, ErrRejected},
		{"undeclared member on both sides", `{"spec":{"bogus":{"a":1}}}`, `{"spec":{"bogus":{"b":2}}}`, podSchema, 500, apierr.ReasonUnknown,
			`unable to find api field in struct PodSpec for the json field "bogus"`, ErrStrategic},
		{"$retainKeys not a list", pod, `{"metadata":{"$retainKeys":"name"}}`, podSchema, 400, apierr.ReasonBadRequest,
			"invalid patch format of retainKeys", ErrMalformed},
		{"$retainKeys missing patched key", pod, `{"metadata":{"$retainKeys":["name"],"labels":{"a":"b"}}}`, podSchema, 400, apierr.ReasonBadRequest,
			"invalid patch format of retainKeys", ErrMalformed},
		{"bad delete list key", pod, `{"metadata":{"$deleteFromPrimitiveListfinalizers":["a"]}}`, podSchema, 400, apierr.ReasonBadRequest,
			"invalid patch format of primitive list", ErrMalformed},
		{"bad set order key", pod, `{"metadata":{"$setElementOrderfinalizers":["a"]}}`, podSchema, 400, apierr.ReasonBadRequest,
			"invalid patch format of setElementOrder list", ErrMalformed},
		{"set order not a list", pod, `{"metadata":{"$setElementOrder/finalizers":"a"}}`, podSchema, 500, apierr.ReasonUnknown,
			"expected a []interface {}, but received a string", ErrStrategic},
		{"set order contradicts patch", pod, `{"metadata":{"$setElementOrder/finalizers":["a"],"finalizers":["z"]}}`, podSchema, 500, apierr.ReasonUnknown,
			"the order in patch list:\n[z]\n doesn't match $setElementOrder list:\n[a]", ErrStrategic},
		{"set order item without key", pod, `{"spec":{"$setElementOrder/containers":[{"image":"x"}]}}`, podSchema, 500, apierr.ReasonUnknown,
			"map: map[image:x] does not contain declared merge key: name", ErrStrategic},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, err := StrategicMergeBytes([]byte(c.original), []byte(c.patch), c.s)
			if out != nil {
				t.Fatalf("got output %s with error", out)
			}
			wantStatus(t, err, c.code, c.reason, c.message)
			wantKind(t, err, c.kind)
		})
	}
}

// TestStrategicMergeMaps checks the map API directly: the result is the
// patched object and a nil original behaves as empty.
func TestStrategicMergeNilOriginal(t *testing.T) {
	t.Parallel()
	got, err := StrategicMerge(nil, map[string]any{"a": map[string]any{"b": int64(1), "c": nil}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := got["a"].(map[string]any)
	if !ok || len(a) != 1 || a["b"] != int64(1) {
		t.Fatalf("got %#v", got)
	}
}

// TestDecodeObject checks numbers, null and the text a caller prints for a
// rejected strategic patch (upstream formats the decoded map with %v).
func TestDecodeObject(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, printed string
	}{
		{"golden strict patch", `{"spec": {"x": 1}, "data": {"k": "p"}}`, "map[data:map[k:p] spec:map[x:1]]"},
		{"numbers", `{"i":-3,"f":2.5,"e":1e2,"l":[1,{"n":7}]}`, "map[e:100 f:2.5 i:-3 l:[1 map[n:7]]]"},
		{"null", `null`, "map[]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m, err := DecodeObject([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%+v", m); got != c.printed {
				t.Fatalf("printed %q, want %q", got, c.printed)
			}
		})
	}
	m, _ := DecodeObject([]byte(`{"i":3,"f":2.5}`))
	if _, ok := m["i"].(int64); !ok {
		t.Fatalf("integer decoded as %T", m["i"])
	}
	if _, ok := m["f"].(float64); !ok {
		t.Fatalf("fraction decoded as %T", m["f"])
	}
	_, err := DecodeObject([]byte(`"s"`))
	wantStatus(t, err, 400, apierr.ReasonBadRequest, "json: cannot unmarshal string into Go value of type map[string]interface {}")
}
