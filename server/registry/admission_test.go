package registry

import (
	"context"
	"slices"
	"testing"
)

// TestComposeAdmissionSubresources: the subresource hooks of the enabled
// plugins' steps are chained per subresource in the steps' order; a
// disabled plugin's are left out, and none at all leaves no map.
func TestComposeAdmissionSubresources(t *testing.T) {
	t.Parallel()
	var ran []string
	hook := func(name string) AdmissionHook {
		return func(context.Context, Lookup, Object, Object) error { ran = append(ran, name); return nil }
	}
	s := Strategy{AdmissionSteps: []AdmissionStep{
		{Plugin: "A", Validate: hook("A"), ValidateSubresources: map[string]AdmissionHook{"x": hook("A/x")}},
		{Plugin: "B", ValidateSubresources: map[string]AdmissionHook{"x": hook("B/x"), "y": hook("B/y")}},
		{Plugin: "C", ValidateSubresources: map[string]AdmissionHook{"x": hook("C/x")}},
	}}
	s.ComposeAdmission(func(p string) bool { return p != "C" })
	if len(s.ValidateSubresourceAdmission) != 2 {
		t.Fatalf("subresources %v, want x and y", s.ValidateSubresourceAdmission)
	}
	for _, sub := range []string{"x", "y"} {
		if err := s.ValidateSubresourceAdmission[sub](context.Background(), nil, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ValidateAdmission(context.Background(), nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if want := []string{"A/x", "B/x", "B/y", "A"}; !slices.Equal(ran, want) {
		t.Errorf("ran %v, want %v", ran, want)
	}
	s.ComposeAdmission(func(string) bool { return false })
	if s.ValidateSubresourceAdmission != nil || s.ValidateAdmission != nil {
		t.Errorf("all off: %v %v", s.ValidateSubresourceAdmission, s.ValidateAdmission != nil)
	}
}
