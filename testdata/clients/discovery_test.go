package clients

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// protoObject is a generated type with its protobuf marshaller.
type protoObject interface {
	runtime.Object
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// TestDiscoveryProtobuf reads every kind of discovery document in
// protobuf, as upstream serves them: each decodes with the generated
// types into what its JSON form decodes to, and its message is byte for
// byte what the generated marshaller makes of that.
func TestDiscoveryProtobuf(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path, accept string) (string, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, cfg.Host+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", accept)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s (%s): %d %v %.300s", path, accept, res.StatusCode, err, body)
		}
		return res.Header.Get("Content-Type"), body
	}

	for _, tc := range []struct {
		path, params string
		kind         string
		new          func() protoObject
	}{
		{"/api", "", "APIVersions", func() protoObject { return &metav1.APIVersions{} }},
		{"/apis", "", "APIGroupList", func() protoObject { return &metav1.APIGroupList{} }},
		{"/apis/apps", "", "APIGroup", func() protoObject { return &metav1.APIGroup{} }},
		{"/api/v1", "", "APIResourceList", func() protoObject { return &metav1.APIResourceList{} }},
		{"/apis/apps/v1", "", "APIResourceList", func() protoObject { return &metav1.APIResourceList{} }},
		{"/api", ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", "APIGroupDiscoveryList", func() protoObject { return &apidiscoveryv2.APIGroupDiscoveryList{} }},
		{"/apis", ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", "APIGroupDiscoveryList", func() protoObject { return &apidiscoveryv2.APIGroupDiscoveryList{} }},
		{"/apis", ";g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", "APIGroupDiscoveryList", func() protoObject { return &apidiscoveryv2beta1.APIGroupDiscoveryList{} }},
	} {
		name := tc.path + tc.params
		ct, pb := get(tc.path, protobufType+tc.params)
		if ct != protobufType+tc.params {
			t.Errorf("%s: Content-Type %q", name, ct)
		}
		_, js := get(tc.path, "application/json"+tc.params)
		if !bytes.HasPrefix(pb, []byte("k8s\x00")) {
			t.Errorf("%s: no protobuf envelope: %.40q", name, pb)
			continue
		}
		var u runtime.Unknown
		if err := u.Unmarshal(pb[4:]); err != nil {
			t.Errorf("%s: envelope: %v", name, err)
			continue
		}
		if u.Kind != tc.kind || u.ContentType != "" {
			t.Errorf("%s: envelope kind %q, content type %q", name, u.Kind, u.ContentType)
		}
		fromProto, fromJSON := tc.new(), tc.new()
		if err := fromProto.Unmarshal(u.Raw); err != nil {
			t.Errorf("%s: message: %v", name, err)
			continue
		}
		fromProto.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(u.APIVersion, u.Kind))
		if err := json.Unmarshal(js, fromJSON); err != nil {
			t.Fatalf("%s: JSON: %v", name, err)
		}
		if want, err := fromJSON.Marshal(); err != nil || !bytes.Equal(want, u.Raw) {
			t.Errorf("%s: message of %d bytes, the generated marshaller's %d (%v)", name, len(u.Raw), len(want), err)
		}
		if !reflect.DeepEqual(fromProto, fromJSON) {
			p, _ := json.Marshal(fromProto)
			t.Errorf("%s: protobuf and JSON differ:\n protobuf %.600s\n JSON     %.600s", name, p, js)
		}
	}
}
