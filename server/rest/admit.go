package rest

import (
	"context"
	"errors"
	"fmt"

	"platd/security"
	"platd/server/apierr"
	"platd/server/registry"
)

// admitted says whether a write runs the type's admission hooks: writes
// of the main resource do, subresource writes (a scale writes the main
// resource for its subresource) do not, as upstream's plugins skip them.
func admitted(s *scope) bool { return s.sub == "" && s.trackAs == "" }

// admit runs the type's Admit hook on a write (old is nil on create). A
// refusal names the object as the request named it, its generateName when
// it gave no name: upstream's mutating admission runs before a name is
// generated.
func (h *Handler) admit(ctx context.Context, s *scope, obj, old Object) error {
	hook := s.d.Strategy.Admit
	if hook == nil || !admitted(s) {
		return nil
	}
	name := metaString(obj, "name")
	if old == nil && s.generatedName {
		name = metaString(obj, "generateName")
	}
	if name == "" {
		// Upstream's admission names an object it cannot name so.
		name = "Unknown"
	}
	return admissionErr(s.d, name, hook(ctx, h, obj, old))
}

// validateAdmission runs the type's ValidateAdmission hook on a valid
// object about to be written. What the hook warns of (security.AddWarning)
// joins the write's warnings, answered whether or not the write succeeds.
func (h *Handler) validateAdmission(ctx context.Context, s *scope, obj, old Object) error {
	hook := s.d.Strategy.ValidateAdmission
	if hook == nil || !admitted(s) {
		return nil
	}
	ctx = security.WithWarnings(ctx, func(m string) { s.warnings = append(s.warnings, m) })
	return admissionErr(s.d, metaString(obj, "name"), hook(ctx, h, obj, old))
}

// admissionErr is the answer to an admission hook's error: a Denial is a
// 403 naming the object, anything else is answered as it is.
func admissionErr(d *registry.Descriptor, name string, err error) error {
	var denial *registry.Denial
	if !errors.As(err, &denial) {
		return err
	}
	return apierr.NewForbidden(d.Group, d.Resource, name,
		fmt.Sprintf("%s %q is forbidden: %s", d.GroupResource(), name, denial.Reason))
}
