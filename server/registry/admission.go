package registry

import (
	"context"
	"strings"
)

// Lookup reads stored objects for a type's admission hooks: the server's
// own read path, in process, at its latest revision. Objects are in d's
// served form, with kind and apiVersion, and are shared with other
// readers: a hook only reads them, never modifies them nor puts a map or
// list of theirs into the object it admits (it copies what it keeps).
// Errors are Status errors (a missing object is a NotFound). It may be
// used concurrently.
type Lookup interface {
	// Get returns the object of d called name in namespace ns ("" for a
	// cluster-scoped resource).
	Get(d *Descriptor, ns, name string) (Object, error)
	// List returns the objects of d in namespace ns ("" for all) and the
	// revision they were read at.
	List(d *Descriptor, ns string) ([]Object, int64, error)
}

// Denial is an admission hook's refusal of a write. It is answered 403
// Forbidden, `<resource> "<name>" is forbidden: <Reason>`, as upstream's
// admission plugins refuse.
type Denial struct{ Reason string }

func (e *Denial) Error() string { return e.Reason }

// dryRunKey marks the context of a dry-run write's admission.
type dryRunKey struct{}

// WithDryRun returns ctx telling the admission hooks it is passed to that
// the write they admit is a dry run: it will not be stored.
func WithDryRun(ctx context.Context) context.Context {
	return context.WithValue(ctx, dryRunKey{}, true)
}

// IsDryRun reports whether the write an admission hook admits on ctx is a
// dry run (WithDryRun), as upstream's admission attributes tell.
func IsDryRun(ctx context.Context) bool {
	dry, _ := ctx.Value(dryRunKey{}).(bool)
	return dry
}

// Denials are an admission hook's refusal of a write for several reasons
// at once, each worded as a Denial's, as upstream's plugins that answer
// an aggregate of Forbidden errors (one per field at fault). Such an
// aggregate is no Status error: upstream answers it 500 without a
// reason, the message joining each `<resource> "<name>" is forbidden:
// <reason>` as an aggregate prints them, one alone, several as
// "[a, b]".
type Denials struct{ Reasons []string }

func (e *Denials) Error() string { return strings.Join(e.Reasons, ", ") }

// AdmissionHook is a type's admission hook (Strategy.Admit or
// Strategy.ValidateAdmission).
type AdmissionHook = func(ctx context.Context, l Lookup, obj, old Object) error

// AdmissionStep is one upstream admission plugin's part of a type's
// admission: its mutating hook, its validating hook, or both.
type AdmissionStep struct {
	// Plugin is the upstream name of the admission plugin the step is
	// (LimitRanger, ServiceAccount): --disable-admission-plugins names it.
	Plugin string
	// Admit joins Strategy.Admit, Validate joins
	// Strategy.ValidateAdmission; either may be nil.
	Admit, Validate AdmissionHook
	// ValidateSubresources are the plugin's validating hooks of updates
	// written through a subresource, by its name; they join
	// Strategy.ValidateSubresourceAdmission.
	ValidateSubresources map[string]AdmissionHook
}

// ComposeAdmission sets s.Admit and s.ValidateAdmission from the steps
// of s.AdmissionSteps whose plugin enabled reports on, in the steps'
// order, each hook running after the one before it succeeded. A type
// without steps keeps its hooks.
func (s *Strategy) ComposeAdmission(enabled func(plugin string) bool) {
	if len(s.AdmissionSteps) == 0 {
		return
	}
	var admit, validate []AdmissionHook
	var subs map[string][]AdmissionHook
	for _, st := range s.AdmissionSteps {
		if !enabled(st.Plugin) {
			continue
		}
		if st.Admit != nil {
			admit = append(admit, st.Admit)
		}
		if st.Validate != nil {
			validate = append(validate, st.Validate)
		}
		for sub, hook := range st.ValidateSubresources {
			if subs == nil {
				subs = map[string][]AdmissionHook{}
			}
			subs[sub] = append(subs[sub], hook)
		}
	}
	s.Admit, s.ValidateAdmission = chain(admit), chain(validate)
	s.ValidateSubresourceAdmission = nil
	for sub, hooks := range subs {
		if s.ValidateSubresourceAdmission == nil {
			s.ValidateSubresourceAdmission = map[string]AdmissionHook{}
		}
		s.ValidateSubresourceAdmission[sub] = chain(hooks)
	}
}

// chain is one hook running hooks in order until one fails; nil for
// none.
func chain(hooks []AdmissionHook) AdmissionHook {
	switch len(hooks) {
	case 0:
		return nil
	case 1:
		return hooks[0]
	}
	return func(ctx context.Context, l Lookup, obj, old Object) error {
		for _, h := range hooks {
			if err := h(ctx, l, obj, old); err != nil {
				return err
			}
		}
		return nil
	}
}
