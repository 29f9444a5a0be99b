package builtin

import (
	"slices"
	"strings"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/validation"
)

func coordinationV1(b config.Brand) []*registry.Descriptor {
	return []*registry.Descriptor{leases(b.Group("coordination"))}
}

// coordinatedLeaderElection says whether a Lease may carry a strategy and
// a preferred holder. Upstream v1.32 ships that feature off (alpha), so
// writes drop both fields unless the stored lease already has them.
const coordinatedLeaderElection = false

// leaseStrategies are the strategies without a domain.
var leaseStrategies = []string{"OldestEmulationVersion"}

// leases: what leader election writes. A PUT may create one, as
// upstream's resource locks rely on.
func leases(group string) *registry.Descriptor {
	d := groupType(group, "leases", "lease", "Lease", true)
	d.UpdateCreates = true
	d.UpdateRequiresResourceVersion = true
	d.Strategy.PrepareForCreate = func(obj registry.Object) {
		if !coordinatedLeaderElection {
			if spec := mapAt(obj, "spec"); spec != nil {
				delete(spec, "strategy")
				delete(spec, "preferredHolder")
			}
		}
	}
	d.Strategy.PrepareForUpdate = func(obj, old registry.Object, _ string) {
		spec, oldSpec := mapAt(obj, "spec"), mapAt(old, "spec")
		if coordinatedLeaderElection || spec == nil {
			return
		}
		for _, f := range []string{"strategy", "preferredHolder"} {
			if !present(oldSpec, f) {
				delete(spec, f)
			}
		}
	}
	d.Strategy.Validate = validateLease
	return d
}

func validateLease(obj registry.Object) apierr.FieldErrors {
	var errs apierr.FieldErrors
	spec := mapAt(obj, "spec")
	if n, ok := intOf(spec["leaseDurationSeconds"]); ok && n <= 0 {
		errs = append(errs, apierr.Invalid("spec.leaseDurationSeconds", n, "must be greater than 0"))
	}
	if n, ok := intOf(spec["leaseTransitions"]); ok && n < 0 {
		errs = append(errs, apierr.Invalid("spec.leaseTransitions", n, negativeMsg))
	}
	if present(spec, "strategy") {
		errs = append(errs, validateLeaseStrategy(str(spec, "strategy"), "spec.strategy")...)
	}
	if str(spec, "preferredHolder") != "" && str(spec, "strategy") == "" {
		errs = append(errs, apierr.Forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
	}
	return errs
}

// validateLeaseStrategy checks a coordinated election strategy: a known
// name, or a qualified one of a domain. Upstream reports it one level
// deeper than the field.
func validateLeaseStrategy(s, path string) apierr.FieldErrors {
	path += ".strategy"
	if !strings.Contains(s, "/") {
		if !slices.Contains(leaseStrategies, s) {
			return apierr.FieldErrors{apierr.NotSupported(path, s, leaseStrategies)}
		}
		return nil
	}
	var errs apierr.FieldErrors
	for _, msg := range validation.IsQualifiedName(s) {
		errs = append(errs, apierr.Invalid(path, s, msg))
	}
	return errs
}
