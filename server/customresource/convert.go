package customresource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
	"platd/server/validation"
	"platd/server/webhookclient"
	"platd/uuid"
)

// conversionTimeout bounds one call of a conversion webhook; upstream's
// is fixed at 30 s and the webhook is told so (?timeout=30s).
const conversionTimeout = 30 * time.Second

// The ConversionReview versions sent: the first of a webhook's
// conversionReviewVersions among them is used.
const (
	reviewV1      = "v1"
	reviewV1beta1 = "v1beta1"
)

// maxAnnotationsSize is the total size of an object's annotations, keys
// and values, that metadata validation allows.
const maxAnnotationsSize = 256 * 1024

// errNoReviewVersion is a webhook that accepts no ConversionReview version
// the server sends.
var errNoReviewVersion = errors.New("no supported conversion review versions")

// webhookConverter converts the objects of one definition between its
// versions by calling the definition's conversion webhook, as upstream's
// webhook converter: one ConversionReview per object, or per list, with
// what needs converting; the answer is checked, and the metadata of each
// object is restored from the original but for its labels and annotations.
// It is immutable once built; a changed definition gets a new one.
type webhookConverter struct {
	group, kind string
	// reviewGroup is the API group of ConversionReview.
	reviewGroup string
	// reviewVersions are the webhook's conversionReviewVersions.
	reviewVersions []string
	client         *webhookclient.Client
	// schemas decode the objects stored in each version of the
	// definition, served or not.
	schemas map[string]*schema.Schema
}

var _ registry.Converter = (*webhookConverter)(nil)

// Schema implements registry.Converter.
func (c *webhookConverter) Schema(version string) *schema.Schema { return c.schemas[version] }

// Release closes the idle connections of the conversion webhook clients
// of descriptors the builder made, once they are no longer served (or
// the server stops); a conversion still running through one opens new
// connections.
func Release(ds []*registry.Descriptor) {
	for _, d := range ds {
		if d.Storage == nil {
			continue
		}
		if cv, ok := d.Storage.Converter.(*webhookConverter); ok {
			cv.client.CloseIdle()
		}
	}
}

// Convert implements registry.Converter.
func (c *webhookConverter) Convert(ctx context.Context, obj registry.Object, apiVersion string) (registry.Object, error) {
	if apiVersion == obj["apiVersion"] {
		return obj, nil
	}
	in := gvkString(obj)
	raw, err := c.review(ctx, in, []registry.Object{obj}, apiVersion)
	if err != nil {
		return nil, err
	}
	out, err := decodeConverted(raw[0])
	if err != nil {
		return nil, failure(err.Error())
	}
	if got, _ := out["apiVersion"].(string); got != apiVersion {
		return nil, failure(fmt.Sprintf("conversion webhook for %s returned invalid object at index 0: invalid groupVersion (expected %s, received %s)", in, apiVersion, got))
	}
	if want, got := str(obj, "kind"), str(out, "kind"); want != got {
		return nil, failure(fmt.Sprintf("conversion webhook for %s returned invalid object at index 0: invalid kind (expected %s, received %s)", in, want, got))
	}
	if err := sameIdentity(obj, out); err != nil {
		return nil, failure(fmt.Sprintf("conversion webhook for %s returned invalid object: %v", in, err))
	}
	if err := restoreMetadata(obj, out); err != nil {
		return nil, failure(fmt.Sprintf("conversion webhook for %s returned invalid metadata: %v", in, err))
	}
	return out, nil
}

// ConvertList implements registry.Converter. Failures name the list as
// upstream's: its kind, in the version of its first item converted.
func (c *webhookConverter) ConvertList(ctx context.Context, items []registry.Object, apiVersion string) ([]registry.Object, error) {
	var send []registry.Object
	for _, it := range items {
		if it["apiVersion"] != apiVersion {
			send = append(send, it)
		}
	}
	if len(send) == 0 {
		return items, nil
	}
	gv, _ := send[0]["apiVersion"].(string)
	in := gv + ", Kind=" + c.kind + "List"
	raw, err := c.review(ctx, in, send, apiVersion)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(items)
	next := 0
	for i, orig := range items {
		if orig["apiVersion"] == apiVersion {
			continue
		}
		conv, err := decodeConverted(raw[next])
		if err != nil {
			return nil, failure(fmt.Sprintf("conversion webhook for %s returned invalid converted object at index %d: %v", in, next, err))
		}
		// Counted from 1 from here on, as upstream's messages count.
		next++
		if got, _ := conv["apiVersion"].(string); got != apiVersion {
			return nil, failure(fmt.Sprintf("conversion webhook for %s returned invalid converted object at index %d: invalid groupVersion (expected %s, received %s)", in, next, apiVersion, got))
		}
		if want, got := str(orig, "kind"), str(conv, "kind"); want != got {
			return nil, failure(fmt.Sprintf("conversion webhook for %s returned invalid converted object at index %d: invalid kind (expected %s, received %s)", in, next, want, got))
		}
		if err := sameIdentity(orig, conv); err != nil {
			return nil, failure(fmt.Sprintf("conversion webhook for %s returned invalid converted object at index %d: %v", in, next, err))
		}
		if err := restoreMetadata(orig, conv); err != nil {
			return nil, failure(fmt.Sprintf("conversion webhook for %s returned invalid metadata in object at index %d: %v", in, next, err))
		}
		out[i] = conv
	}
	return out, nil
}

// failure is a conversion error as a client reads it: a 500 without
// reason, as upstream's plain errors reach the client.
func failure(msg string) error {
	return apierr.New(http.StatusInternalServerError, apierr.ReasonUnknown, msg, nil)
}

// gvkString prints an object's group, version and kind as upstream's
// messages do: "<group>/<version>, Kind=<kind>".
func gvkString(obj registry.Object) string {
	return str(obj, "apiVersion") + ", Kind=" + str(obj, "kind")
}

// review sends one ConversionReview of objs and returns the converted
// objects the webhook answered, as many as objs, checked as upstream
// checks the answer; in names the input in failures.
func (c *webhookConverter) review(ctx context.Context, in string, objs []registry.Object, apiVersion string) ([]json.RawMessage, error) {
	version := ""
	for _, v := range c.reviewVersions {
		if v == reviewV1 || v == reviewV1beta1 {
			version = v
			break
		}
	}
	if version == "" {
		return nil, failure(errNoReviewVersion.Error())
	}
	uid := uuid.New()
	body, err := c.reviewBody(version, uid, objs, apiVersion)
	if err != nil {
		return nil, failure(fmt.Sprintf("conversion webhook for %s failed: %v", in, err))
	}
	target, err := c.client.Endpoint()
	if err != nil {
		return nil, failure(fmt.Sprintf("conversion webhook for %s failed: %v", in, err))
	}
	ctx, cancel := context.WithTimeout(ctx, conversionTimeout)
	defer cancel()
	target = webhookclient.WithQuery(target, "timeout", conversionTimeout.String())
	data, err := c.client.Post(ctx, target, body)
	if err != nil {
		return nil, failure(fmt.Sprintf("conversion webhook for %s failed: %v", in, err))
	}
	converted, err := readReviewResponse(data, c.reviewGroup, version, uid)
	if err != nil {
		return nil, failure(fmt.Sprintf("conversion webhook for %s failed: %v", in, err))
	}
	if len(converted) != len(objs) {
		return nil, failure(fmt.Sprintf("conversion webhook for %s returned %d objects, expected %d", in, len(converted), len(objs)))
	}
	return converted, nil
}

// reviewBody is the JSON of a ConversionReview request.
func (c *webhookConverter) reviewBody(version, uid string, objs []registry.Object, apiVersion string) ([]byte, error) {
	raw := make([]json.RawMessage, len(objs))
	for i, o := range objs {
		b, err := schema.AppendAny(nil, map[string]any(o))
		if err != nil {
			return nil, err
		}
		raw[i] = b
	}
	type request struct {
		UID               string            `json:"uid"`
		DesiredAPIVersion string            `json:"desiredAPIVersion"`
		Objects           []json.RawMessage `json:"objects"`
	}
	return json.Marshal(struct {
		Kind       string  `json:"kind"`
		APIVersion string  `json:"apiVersion"`
		Request    request `json:"request"`
	}{"ConversionReview", c.reviewGroup + "/" + version, request{uid, apiVersion, raw}})
}

// reviewResponse is what a conversion webhook answers.
type reviewResponse struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Response   *struct {
		UID              string            `json:"uid"`
		ConvertedObjects []json.RawMessage `json:"convertedObjects"`
		Result           struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"result"`
	} `json:"response"`
}

// readReviewResponse decodes and checks a webhook's answer to a review of
// the given version with uid, and returns its converted objects. A v1
// answer must be a v1 ConversionReview carrying uid; v1beta1 answers are
// not checked for either, as upstream.
func readReviewResponse(data []byte, reviewGroup, version, uid string) ([]json.RawMessage, error) {
	var r reviewResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if version == reviewV1 {
		want := reviewGroup + "/" + reviewV1
		if r.APIVersion != want || r.Kind != "ConversionReview" {
			return nil, fmt.Errorf("expected webhook response of %s, Kind=ConversionReview, got %s, Kind=%s", want, r.APIVersion, r.Kind)
		}
	}
	if r.Response == nil {
		return nil, errors.New("no response provided")
	}
	if version == reviewV1 && r.Response.UID != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, r.Response.UID)
	}
	if res := r.Response.Result; res.Status != "Success" {
		if res.Message != "" {
			return nil, errors.New(res.Message)
		}
		return nil, fmt.Errorf("response.result.status was '%s', not 'Success'", res.Status)
	}
	return r.Response.ConvertedObjects, nil
}

// decodeConverted decodes one converted object, which must be a JSON
// object with a kind.
func decodeConverted(raw json.RawMessage) (registry.Object, error) {
	v, err := schema.DecodeAny(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("cannot unmarshal %s into an object", strings.TrimSpace(string(raw)))
	}
	if k, ok := obj["kind"].(string); !ok || k == "" {
		return nil, fmt.Errorf("Object 'Kind' is missing in '%s'", raw)
	}
	return obj, nil
}

// sameIdentity checks that a webhook kept what identifies the object.
func sameIdentity(in, out registry.Object) error {
	if a, b := str(in, "kind"), str(out, "kind"); a != b {
		return fmt.Errorf("must have the same kind: %v != %v", a, b)
	}
	im, om := mapOf(in["metadata"]), mapOf(out["metadata"])
	for _, f := range []struct{ key, name string }{{"name", "name"}, {"namespace", "namespace"}, {"uid", "UID"}} {
		if a, b := str(im, f.key), str(om, f.key); a != b {
			return fmt.Errorf("must have the same %s: %v != %v", f.name, a, b)
		}
	}
	return nil
}

// restoreMetadata gives the converted object out the metadata of the
// original in, but for the labels and annotations out carries, which
// must be maps of strings, valid if they changed.
func restoreMetadata(in, out registry.Object) error {
	raw, ok := out["metadata"]
	if !ok {
		return errors.New("missing metadata in converted object")
	}
	answered, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("invalid metadata of type %T in converted object", raw)
	}
	md, _ := schema.DeepCopy(in["metadata"]).(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	for _, f := range []string{"labels", "annotations"} {
		v := answered[f]
		if v == nil {
			delete(md, f)
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("invalid metadata.%s of type %T in converted object", f, v)
		}
		orig, _ := md[f].(map[string]any)
		for k, x := range m {
			if _, ok := x.(string); !ok {
				return fmt.Errorf("metadata.%s[%s] must be a string, but is %T in converted object", f, k, x)
			}
		}
		if !reflect.DeepEqual(orig, m) && (len(orig) > 0 || len(m) > 0) {
			if errs := validateMetadataMap(f, m); len(errs) > 0 {
				return errs
			}
		}
		md[f] = m
	}
	out["metadata"] = md
	return nil
}

// validateMetadataMap checks changed labels or annotations as metadata
// validation does; annotations are named "metadata.annotation", as
// upstream's conversion names them.
func validateMetadataMap(f string, m map[string]any) apierr.FieldErrors {
	var errs apierr.FieldErrors
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if f == "labels" {
		for _, k := range keys {
			for _, msg := range validation.IsQualifiedName(k) {
				errs = append(errs, apierr.Invalid("metadata.labels", k, msg))
			}
			v := m[k].(string)
			for _, msg := range validation.IsValidLabelValue(v) {
				errs = append(errs, apierr.Invalid("metadata.labels", v, msg))
			}
		}
		return errs
	}
	total := 0
	for _, k := range keys {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, apierr.Invalid("metadata.annotation", k, msg))
		}
		total += len(k) + len(m[k].(string))
	}
	if total > maxAnnotationsSize {
		errs = append(errs, &apierr.FieldError{Type: apierr.FieldTooLong, Field: "metadata.annotation",
			Detail: fmt.Sprintf("may not be more than %d bytes", maxAnnotationsSize)})
	}
	return errs
}
