package customresource

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/webhookclient"
)

const testReviewGroup = "apiextensions.example.io"

// testHost is a v1 object of group h.example.com.
func testHost(name string, labels map[string]any) registry.Object {
	md := map[string]any{"name": name, "namespace": "ns", "uid": "u-" + name, "generation": int64(1), "resourceVersion": "5"}
	if labels != nil {
		md["labels"] = labels
	}
	return registry.Object{"apiVersion": "h.example.com/v1", "kind": "Host", "metadata": md, "spec": map[string]any{"v": int64(1)}}
}

// converterAgainst returns a converter calling a webhook that answers
// what answer makes of each review it gets (decoded).
func converterAgainst(t *testing.T, reviewVersions []string, answer func(review map[string]any) any) *webhookConverter {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review map[string]any
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(answer(review))
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	def := &Definition{Group: "h.example.com", Kind: "Host", Webhook: true, ReviewVersions: reviewVersions,
		WebhookClientConfig: map[string]any{"url": srv.URL, "caBundle": base64.StdEncoding.EncodeToString(ca)}}
	cv := &webhookConverter{group: def.Group, kind: def.Kind, reviewGroup: testReviewGroup, reviewVersions: def.ReviewVersions}
	cv.client = webhookclient.New(def.WebhookClientConfig)
	t.Cleanup(func() { Release([]*registry.Descriptor{{Storage: &registry.Storage{Converter: cv}}}) })
	return cv
}

// converted answers a review by converting each object to the desired
// version, then lets edit change the answer.
func converted(edit func(review, response map[string]any, objs []any)) func(map[string]any) any {
	return func(review map[string]any) any {
		req := review["request"].(map[string]any)
		objs := req["objects"].([]any)
		for _, o := range objs {
			o.(map[string]any)["apiVersion"] = req["desiredAPIVersion"]
		}
		resp := map[string]any{"uid": req["uid"], "convertedObjects": objs, "result": map[string]any{"status": "Success"}}
		out := map[string]any{"kind": "ConversionReview", "apiVersion": review["apiVersion"], "response": resp}
		if edit != nil {
			edit(out, resp, objs)
		}
		return out
	}
}

// TestWebhookConverterConvert checks the conversion of one object: the
// answer's checks, in upstream's words, and the metadata kept.
func TestWebhookConverterConvert(t *testing.T) {
	t.Parallel()
	const in = "conversion webhook for h.example.com/v1, Kind=Host "
	firstMeta := func(objs []any) map[string]any { return objs[0].(map[string]any)["metadata"].(map[string]any) }
	tests := []struct {
		name     string
		versions []string
		edit     func(review, response map[string]any, objs []any)
		want     string
	}{
		{name: "no known review version", versions: []string{"v2"}, want: "no supported conversion review versions"},
		{name: "review of another version", edit: func(review, _ map[string]any, _ []any) { review["apiVersion"] = testReviewGroup + "/v1beta1" },
			want: in + "failed: expected webhook response of " + testReviewGroup + "/v1, Kind=ConversionReview, got " + testReviewGroup + "/v1beta1, Kind=ConversionReview"},
		{name: "no response", edit: func(review, _ map[string]any, _ []any) { delete(review, "response") },
			want: in + "failed: no response provided"},
		{name: "uid", edit: func(_, resp map[string]any, _ []any) { resp["uid"] = "x" },
			want: in + `failed: expected response.uid="`},
		{name: "failure with message", edit: func(_, resp map[string]any, _ []any) {
			resp["result"] = map[string]any{"status": "Failure", "message": "no way"}
		}, want: in + "failed: no way"},
		{name: "failure without message", edit: func(_, resp map[string]any, _ []any) { resp["result"] = map[string]any{} },
			want: in + "failed: response.result.status was '', not 'Success'"},
		{name: "count", edit: func(_, resp map[string]any, objs []any) { resp["convertedObjects"] = append(objs, objs[0]) },
			want: in + "returned 2 objects, expected 1"},
		{name: "kind", edit: func(_, _ map[string]any, objs []any) { objs[0].(map[string]any)["kind"] = "Guest" },
			want: in + "returned invalid object at index 0: invalid kind (expected Host, received Guest)"},
		{name: "no kind", edit: func(_, _ map[string]any, objs []any) { delete(objs[0].(map[string]any), "kind") },
			want: "Object 'Kind' is missing in '"},
		{name: "namespace", edit: func(_, _ map[string]any, objs []any) { firstMeta(objs)["namespace"] = "other" },
			want: in + "returned invalid object: must have the same namespace: ns != other"},
		{name: "uid changed", edit: func(_, _ map[string]any, objs []any) { firstMeta(objs)["uid"] = "v" },
			want: in + "returned invalid object: must have the same UID: u-a != v"},
		{name: "no metadata", edit: func(_, _ map[string]any, objs []any) { delete(objs[0].(map[string]any), "metadata") },
			want: in + "returned invalid object: must have the same name: a != "},
		{name: "label not a string", edit: func(_, _ map[string]any, objs []any) { firstMeta(objs)["labels"] = map[string]any{"n": 1} },
			want: in + "returned invalid metadata: metadata.labels[n] must be a string, but is int64 in converted object"},
		{name: "invalid label", edit: func(_, _ map[string]any, objs []any) { firstMeta(objs)["labels"] = map[string]any{"a b": "c"} },
			want: in + `returned invalid metadata: metadata.labels: Invalid value: "a b": name part must consist of alphanumeric characters`},
		{name: "invalid annotation", edit: func(_, _ map[string]any, objs []any) { firstMeta(objs)["annotations"] = map[string]any{"a b": "c"} },
			want: in + `returned invalid metadata: metadata.annotation: Invalid value: "a b": name part must consist of alphanumeric characters`},
		{name: "labels not a map", edit: func(_, _ map[string]any, objs []any) { firstMeta(objs)["labels"] = "x" },
			want: in + "returned invalid metadata: invalid metadata.labels of type string in converted object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			versions := tt.versions
			if versions == nil {
				versions = []string{"v1"}
			}
			cv := converterAgainst(t, versions, converted(tt.edit))
			_, err := cv.Convert(context.Background(), testHost("a", nil), "h.example.com/v2")
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if st := apierr.FromError(err).Status; st.Code != http.StatusInternalServerError || st.Reason != "" {
				t.Errorf("status %+v, want a 500 without reason", st)
			}
		})
	}
}

// TestWebhookConverterMetadata checks that labels and annotations are
// taken from the answer and the rest of the metadata from the original.
func TestWebhookConverterMetadata(t *testing.T) {
	t.Parallel()
	cv := converterAgainst(t, []string{"v1beta1", "v1"}, converted(func(_, resp map[string]any, objs []any) {
		resp["uid"] = "v1beta1 answers are not checked for it"
		md := objs[0].(map[string]any)["metadata"].(map[string]any)
		md["labels"] = map[string]any{"converted": "yes"}
		md["annotations"] = map[string]any{"note": "x"}
		md["generation"] = 7
		md["resourceVersion"] = "9"
		objs[0].(map[string]any)["spec"] = map[string]any{"w": 2}
	}))
	in := testHost("a", map[string]any{"old": "label"})
	out, err := cv.Convert(context.Background(), in, "h.example.com/v2")
	if err != nil {
		t.Fatal(err)
	}
	want := registry.Object{"apiVersion": "h.example.com/v2", "kind": "Host",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "uid": "u-a", "generation": int64(1), "resourceVersion": "5",
			"labels": map[string]any{"converted": "yes"}, "annotations": map[string]any{"note": "x"}},
		"spec": map[string]any{"w": int64(2)}}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("converted\n got  %v\n want %v", out, want)
	}
	// Already in the desired version: no call, the object as it is.
	same, err := cv.Convert(context.Background(), in, "h.example.com/v1")
	if err != nil || !reflect.DeepEqual(same, testHost("a", map[string]any{"old": "label"})) {
		t.Errorf("no conversion: %v %v", same, err)
	}
}

// TestWebhookConverterList checks that a list sends the items to convert
// in one review and puts the answers back in order, and its messages.
func TestWebhookConverterList(t *testing.T) {
	t.Parallel()
	var sent [][]string
	cv := converterAgainst(t, []string{"v1"}, converted(func(review, _ map[string]any, objs []any) {
		var names []string
		for _, o := range objs {
			names = append(names, o.(map[string]any)["metadata"].(map[string]any)["name"].(string))
		}
		sent = append(sent, names)
		if len(objs) == 3 {
			objs[2].(map[string]any)["apiVersion"] = "h.example.com/v3"
		}
	}))
	b := testHost("b", nil)
	b["apiVersion"] = "h.example.com/v2"
	out, err := cv.ConvertList(context.Background(), []registry.Object{testHost("a", nil), b, testHost("c", nil)}, "h.example.com/v2")
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if o["apiVersion"] != "h.example.com/v2" || o["metadata"].(map[string]any)["name"] != string(rune('a'+i)) {
			t.Errorf("item %d: %v", i, o)
		}
	}
	if !reflect.DeepEqual(sent, [][]string{{"a", "c"}}) {
		t.Errorf("sent %v, want one review of a and c", sent)
	}
	_, err = cv.ConvertList(context.Background(), []registry.Object{testHost("a", nil), testHost("b", nil), testHost("c", nil)}, "h.example.com/v2")
	want := "conversion webhook for h.example.com/v1, Kind=HostList returned invalid converted object at index 3: invalid groupVersion (expected h.example.com/v2, received h.example.com/v3)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	sent = nil
	if out, err := cv.ConvertList(context.Background(), []registry.Object{b}, "h.example.com/v2"); err != nil || len(out) != 1 || sent != nil {
		t.Errorf("a list already converted: %v %v, sent %v", out, err, sent)
	}
}

// FuzzReadReviewResponse checks that any answer of a webhook is either
// refused or yields objects, without a panic, and that a v1 answer is
// accepted only with the request's uid and a successful result.
func FuzzReadReviewResponse(f *testing.F) {
	f.Add([]byte(`{"kind":"ConversionReview","apiVersion":"`+testReviewGroup+`/v1","response":{"uid":"u","convertedObjects":[{"kind":"Host","apiVersion":"h/v2","metadata":{"name":"a"}}],"result":{"status":"Success"}}}`), "v1", "u")
	f.Add([]byte(`{"response":{"convertedObjects":[1,"x",null,{"kind":7}],"result":{"status":"Success"}}}`), "v1beta1", "u")
	f.Add([]byte(`{"response":{"result":{"status":"Failure","message":"m"}}}`), "v1beta1", "")
	f.Add([]byte(`[]`), "v1", "u")
	f.Fuzz(func(t *testing.T, data []byte, version, uid string) {
		objs, err := readReviewResponse(data, testReviewGroup, version, uid)
		if err != nil {
			return
		}
		var r reviewResponse
		if json.Unmarshal(data, &r) != nil || r.Response == nil || r.Response.Result.Status != "Success" {
			t.Fatalf("accepted %q", data)
		}
		if version == reviewV1 && (r.Response.UID != uid || r.Kind != "ConversionReview") {
			t.Fatalf("accepted a v1 answer of uid %q for %q", r.Response.UID, uid)
		}
		for _, raw := range objs {
			if obj, err := decodeConverted(raw); err == nil {
				if k, _ := obj["kind"].(string); k == "" {
					t.Fatalf("object without kind decoded from %q", raw)
				}
				_ = sameIdentity(testHost("a", nil), obj)
				_ = restoreMetadata(testHost("a", nil), obj)
			}
		}
	})
}
