package builtin

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"platd/server/registry"
)

func TestClaimResize(t *testing.T) {
	t.Parallel()
	r := newClaimResize(brand, kindOf(storageV1(brand), "StorageClass"))
	beta := "volume.beta." + brand.Label("storage-class")
	classes := []registry.Object{
		{"metadata": map[string]any{"name": "grows"}, "allowVolumeExpansion": true},
		{"metadata": map[string]any{"name": "fixed"}, "allowVolumeExpansion": false},
		{"metadata": map[string]any{"name": "unsaid"}},
	}
	// claim is a claim asking for storage, in phase, naming class by field
	// ("" for none) and, when annotated is set, by the beta annotation.
	claim := func(storage, phase, class string, annotated ...string) registry.Object {
		c := registry.Object{
			"metadata": map[string]any{"name": "data"},
			"spec":     map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": storage}}},
			"status":   map[string]any{"phase": phase},
		}
		if class != "" {
			c["spec"].(map[string]any)["storageClassName"] = class
		}
		if len(annotated) > 0 {
			c["metadata"].(map[string]any)["annotations"] = map[string]any{beta: annotated[0]}
		}
		return c
	}
	denied := func(msg string) string { return "denied: " + msg }
	tests := []struct {
		name     string
		old, obj registry.Object
		want     string
	}{
		{"create", nil, claim("5Gi", "Pending", ""), ""},
		{"same size", claim("1Gi", "Pending", "fixed"), claim("1024Mi", "Pending", "fixed"), ""},
		{"shrunk", claim("2Gi", "Bound", "fixed"), claim("1Gi", "Bound", "fixed"), ""},
		{"grown, pending", claim("1Gi", "Pending", "grows"), claim("2Gi", "Pending", "grows"), denied(msgResizeUnbound)},
		{"grown, lost", claim("1Gi", "Lost", "grows"), claim("2Gi", "Bound", "grows"), denied(msgResizeUnbound)},
		{"grown, class allows", claim("1Gi", "Bound", "grows"), claim("2Gi", "Bound", "grows"), ""},
		{"grown from nothing", claim("", "Bound", "grows"), claim("1", "Bound", "grows"), ""},
		{"grown, class refuses", claim("1Gi", "Bound", "fixed"), claim("2Gi", "Bound", "fixed"), denied(msgResizeClass)},
		{"grown, class does not say", claim("1Gi", "Bound", "unsaid"), claim("2Gi", "Bound", "unsaid"), denied(msgResizeClass)},
		{"grown, class missing", claim("1Gi", "Bound", "gone"), claim("2Gi", "Bound", "gone"), denied(msgResizeClass)},
		{"grown, no class", claim("1Gi", "Bound", ""), claim("2Gi", "Bound", ""), denied(msgResizeClass)},
		{"grown, class given now", claim("1Gi", "Bound", ""), claim("2Gi", "Bound", "grows"), denied(msgResizeClass)},
		{"grown, annotated class", claim("1Gi", "Bound", "", "grows"), claim("2Gi", "Bound", "", "grows"), ""},
		{"annotation first", claim("1Gi", "Bound", "grows", "fixed"), claim("2Gi", "Bound", "grows", "fixed"), denied(msgResizeClass)},
		{"empty annotation", claim("1Gi", "Bound", "grows", ""), claim("2Gi", "Bound", "grows", ""), denied(msgResizeClass)},
	}
	for _, tt := range tests {
		l := fakeLookup{objs: map[*registry.Descriptor][]registry.Object{r.classes: classes}}
		before := copyObj(tt.obj)
		if got := admissionError(r.validate(context.Background(), l, tt.obj, tt.old)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if !reflect.DeepEqual(before, tt.obj) {
			t.Errorf("%s: claim changed: %v", tt.name, tt.obj)
		}
	}
	err := r.validate(context.Background(), fakeLookup{err: errors.New("boom")}, claim("2Gi", "Bound", "grows"), claim("1Gi", "Bound", "grows"))
	if got := admissionError(err); got != denied(msgResizeClass) {
		t.Errorf("class unreadable: %q", got)
	}
}
