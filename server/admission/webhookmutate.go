package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	jsonpatch "github.com/evanphx/json-patch"

	"platd/server/apierr"
	"platd/server/audit"
	"platd/server/registry"
	"platd/server/schema"
)

// maxMutationRounds is how often the mutating webhooks run: once, and
// once more for those with reinvocationPolicy IfNeeded when a later
// webhook changed the object, as upstream.
const maxMutationRounds = 2

// Mutate calls the mutating webhooks that match a write, one after the
// other in calling order as upstream's MutatingAdmissionWebhook plugin,
// each seeing the object as the ones before left it. A webhook's
// JSONPatch is applied to the object in the version of the resource its
// rules matched, which is then defaulted. It returns the changed object
// in the request's version, or nil when no webhook changed it; a
// refusal, or a failure under failurePolicy Fail, is its error.
// Warnings go to security.AddWarning on ctx, audit annotations to the
// request's audit event. a is not changed.
func (w *Webhooks) Mutate(ctx context.Context, a *Attributes) (registry.Object, error) {
	hooks := w.hooks(phaseMutating)
	if len(hooks) == 0 || a.Descriptor.Strategy.NoWebhookAdmission {
		return nil, nil
	}
	st := w.newRequestState(a)
	cur := *a
	changedAny := false
	// invoked are the reinvocable webhooks called since the object last
	// changed; reinvoke those to call again in the second round.
	var invoked []*webhook
	reinvoke := map[*webhook]bool{}
	group := w.brand.Group("admission")
	for round := 0; round < maxMutationRounds; round++ {
		if round > 0 && len(reinvoke) == 0 {
			break
		}
		for i, h := range hooks {
			inv, err := st.match(ctx, h, &cur)
			if err != nil {
				return nil, err
			}
			if inv == nil || (round > 0 && !reinvoke[h]) {
				continue
			}
			obj, err := w.mutateOne(ctx, inv)
			changed := obj != nil && !reflect.DeepEqual(obj, cur.Object)
			annotation, _ := json.Marshal(map[string]any{"configuration": h.config, "webhook": h.name, "mutated": changed})
			audit.AddAnnotation(ctx, fmt.Sprintf("mutation.webhook.%s/round_%d_index_%d", group, round, i), string(annotation))
			if changed {
				cur.Object, changedAny = obj, true
				for _, x := range invoked {
					reinvoke[x] = true
				}
				invoked = nil
			}
			if h.reinvoke {
				invoked = append(invoked, h)
			}
			var ce *callError
			switch {
			case err == nil:
			case errors.As(err, &ce) && h.failOpen:
				audit.AddAnnotation(ctx, fmt.Sprintf("failed-open.mutation.webhook.%s/round_%d_index_%d", group, round, i), h.name)
				if ctx.Err() != nil {
					return nil, apierr.Timeout("request did not complete within requested timeout", 0)
				}
			case errors.As(err, &ce):
				return nil, apierr.InternalError(err)
			default:
				return nil, err
			}
		}
	}
	if !changedAny {
		return nil, nil
	}
	return cur.Object, nil
}

// mutateOne calls one mutating webhook and returns the object its patch
// made, in the request's version (nil without a patch).
func (w *Webhooks) mutateOne(ctx context.Context, inv *invocation) (registry.Object, error) {
	h := inv.hook
	v, err := w.call(ctx, inv, true)
	if err != nil {
		return nil, err
	}
	w.publish(ctx, h, v)
	if !v.allowed {
		return nil, rejection(h.name, v.result)
	}
	if len(v.patch) == 0 {
		return nil, nil
	}
	patch, err := jsonpatch.DecodePatch(v.patch)
	if err != nil {
		return nil, &callError{h.name, fmt.Errorf("received undecodable patch in webhook response: %w", err)}
	}
	if len(patch) == 0 {
		return nil, nil
	}
	va := inv.attr
	if va.Object == nil {
		return nil, apierr.InternalError(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this operation", h.name))
	}
	if v.patchType != patchTypeJSONPatch {
		return nil, &callError{h.name, fmt.Errorf("unsupported patch type %q", v.patchType)}
	}
	data, err := json.Marshal(va.Object)
	if err != nil {
		return nil, apierr.InternalError(err)
	}
	patched, err := patch.Apply(data)
	if err != nil {
		return nil, apierr.InternalError(err)
	}
	if va.Kind != nil {
		// An object of another kind than the resource's is neither
		// defaulted nor converted as the resource's objects are.
		dec, err := schema.Decode(patched, va.KindSchema)
		if err != nil {
			return nil, apierr.InternalError(err)
		}
		obj := dec.Object
		obj["kind"], obj["apiVersion"] = va.Kind.Kind, va.Kind.apiVersion()
		return obj, nil
	}
	d := va.Descriptor
	dec, err := schema.Decode(patched, d.Schema)
	if err != nil {
		return nil, apierr.InternalError(err)
	}
	obj := dec.Object
	obj["kind"], obj["apiVersion"] = d.Kind, d.GroupVersion()
	if d.Strategy.Default != nil {
		d.Strategy.Default(obj)
	}
	schema.ApplyDefaults(obj, d.Schema)
	if va.requested != nil {
		return convert(ctx, d, va.requested, obj)
	}
	return obj, nil
}
