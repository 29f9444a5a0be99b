package builtin

import (
	"testing"

	"platd/server/registry"
)

// TestFlowControlRevisers checks what the server makes of an existing
// bootstrap object: mandatory ones always get their spec and the
// auto-update mark back (the exempt level keeps its own settings);
// suggested ones follow the mark, and an unmarked one is marked by
// whether it was ever changed.
func TestFlowControlRevisers(t *testing.T) {
	t.Parallel()
	key := "apf." + brand.LongDomain + "/autoupdate-spec"
	levels, schemas := FlowControlBootstrap(brand)
	byName := func(objs []registry.Object, name string) registry.Object {
		for _, o := range objs {
			if str(o, "metadata", "name") == name {
				return o
			}
		}
		t.Fatalf("no bootstrap object %q", name)
		return nil
	}
	revisers := map[string]func(have, want registry.Object) registry.Object{
		"level":  PriorityLevelReviser(brand, apiTypeDescriptor(t, "PriorityLevelConfiguration")),
		"schema": FlowSchemaReviser(brand, apiTypeDescriptor(t, "FlowSchema")),
	}
	bootstrap := map[string][]registry.Object{"level": levels, "schema": schemas}
	// stored is the bootstrap object as stored at generation gen, with the
	// mark (none when "-") and change applied.
	stored := func(kind, name string, gen int64, mark string, change func(spec map[string]any)) registry.Object {
		o := copyObj(byName(bootstrap[kind], name))
		meta := child(o, "metadata")
		meta["generation"] = gen
		meta["uid"] = "u1"
		delete(child(meta, "annotations"), key)
		if mark != "-" {
			child(meta, "annotations")[key] = mark
		}
		if change != nil {
			change(child(o, "spec"))
		}
		return o
	}
	shares := func(n int64) func(map[string]any) {
		return func(spec map[string]any) { child(spec, "exempt")["nominalConcurrencyShares"] = n }
	}
	limitedShares := func(n int64) func(map[string]any) {
		return func(spec map[string]any) { child(spec, "limited")["nominalConcurrencyShares"] = n }
	}
	precedence := func(n int64) func(map[string]any) {
		return func(spec map[string]any) { spec["matchingPrecedence"] = n }
	}
	tests := []struct {
		name      string
		kind, obj string
		gen       int64
		mark      string
		change    func(map[string]any)
		unchanged bool   // nil: nothing to write
		wantMark  string // the mark written
		bootSpec  bool   // the spec written is the bootstrap one
		otherSpec bool   // the spec written is the stored one
	}{
		{"mandatory as shipped", "schema", "catch-all", 1, "true", nil, true, "", false, false},
		{"mandatory spec restored", "level", "catch-all", 2, "true", limitedShares(50), false, "true", true, false},
		{"mandatory marked false", "schema", "exempt", 1, "false", nil, false, "true", true, false},
		{"mandatory unmarked", "level", "catch-all", 5, "-", nil, false, "true", true, false},
		{"mandatory spec restored despite false", "level", "catch-all", 2, "false", limitedShares(50), false, "true", true, false},
		{"exempt settings kept", "level", "exempt", 2, "true", shares(7), true, "", false, false},
		{"exempt settings kept, mark restored", "level", "exempt", 2, "false", shares(7), false, "true", false, true},
		{"exempt without its settings", "level", "exempt", 2, "true", func(spec map[string]any) { delete(spec, "exempt") }, false, "", true, false},
		{"suggested as shipped", "schema", "global-default", 1, "true", nil, true, "", false, false},
		{"suggested restored", "schema", "global-default", 2, "true", precedence(4321), false, "", true, false},
		{"suggested true in another spelling", "level", "workload-low", 2, "TRUE", limitedShares(1), false, "", true, false},
		{"suggested kept", "schema", "global-default", 2, "false", precedence(4321), true, "", false, false},
		{"suggested unmarked, changed", "schema", "global-default", 2, "-", precedence(4321), false, "false", false, true},
		{"suggested unreadable mark, changed", "level", "workload-low", 3, "maybe", limitedShares(1), false, "false", false, true},
		{"suggested unmarked, never changed", "schema", "service-accounts", 1, "-", nil, false, "true", true, false},
		{"suggested unmarked, new spec", "level", "workload-low", 1, "-", limitedShares(1), false, "true", true, false},
	}
	for _, tt := range tests {
		have := stored(tt.kind, tt.obj, tt.gen, tt.mark, tt.change)
		before := copyObj(have)
		want := byName(bootstrap[tt.kind], tt.obj)
		got := revisers[tt.kind](have, want)
		if tt.unchanged {
			if got != nil {
				t.Errorf("%s: revised to %v, want it left alone", tt.name, got)
			}
			continue
		}
		if got == nil {
			t.Errorf("%s: left alone, want it revised", tt.name)
			continue
		}
		mark, _ := valueAt(got, "metadata", "annotations", key).(string)
		if wantMark := tt.wantMark; wantMark == "" {
			if mark != tt.mark {
				t.Errorf("%s: mark %q, want it kept (%q)", tt.name, mark, tt.mark)
			}
		} else if mark != wantMark {
			t.Errorf("%s: mark %q, want %q", tt.name, mark, wantMark)
		}
		d := apiTypeDescriptor(t, map[string]string{"level": "PriorityLevelConfiguration", "schema": "FlowSchema"}[tt.kind])
		if tt.bootSpec && !sameMember(d.Schema, got, want, "spec") {
			t.Errorf("%s: spec %v, want the bootstrap one", tt.name, got["spec"])
		}
		if tt.otherSpec && !sameMember(d.Schema, got, before, "spec") {
			t.Errorf("%s: spec %v, want the stored one", tt.name, got["spec"])
		}
		if str(got, "metadata", "uid") != "u1" || intAt(got, "metadata", "generation") != tt.gen {
			t.Errorf("%s: metadata %v, want the stored one", tt.name, got["metadata"])
		}
	}
	// The bootstrap objects themselves are never changed.
	again, _ := FlowControlBootstrap(brand)
	if !sameMember(apiTypeDescriptor(t, "PriorityLevelConfiguration").Schema, byName(levels, "catch-all"), byName(again, "catch-all"), "spec") {
		t.Error("revising changed a bootstrap object")
	}
}

func TestFlowControlRemovable(t *testing.T) {
	t.Parallel()
	key := "apf." + brand.LongDomain + "/autoupdate-spec"
	removable := FlowControlRemovable(brand)
	for mark, want := range map[string]bool{"true": true, "1": true, "True": true, "false": false, "yes": false, "": false, "-": false} {
		o := registry.Object{"metadata": map[string]any{"name": "old"}}
		if mark != "-" {
			child(child(o, "metadata"), "annotations")[key] = mark
		}
		if got := removable(o); got != want {
			t.Errorf("mark %q: removable %v, want %v", mark, got, want)
		}
	}
}
