package controllers

import (
	"context"
	"log/slog"
	"maps"

	"platd/server/apierr"
	"platd/server/registry"
)

// rootCAKey is the ConfigMap key that holds the CA bundle.
const rootCAKey = "ca.crt"

// RootCA publishes the CA bundle that verifies the server's serving
// certificate as a ConfigMap in every live namespace, so workloads can
// trust the server. A changed bundle is put back, a deleted one created
// again.
type RootCA struct {
	Source   Source
	Objects  Objects
	Registry *registry.Registry
	// ConfigMaps is the descriptor ConfigMaps are written through.
	ConfigMaps *registry.Descriptor
	// Name is the ConfigMap's name; Annotation and Description the key and
	// value of the annotation that says what it is for.
	Name, Annotation, Description string
	// CA is the PEM bundle.
	CA  []byte
	Log *slog.Logger
}

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *RootCA) Run(ctx context.Context) {
	p := &perNamespace{
		src: c.Source, objects: c.Objects, reg: c.Registry, target: c.ConfigMaps,
		name: c.Name, log: c.Log, ensure: c.ensure,
	}
	p.run(ctx)
}

func (c *RootCA) data() map[string]any { return map[string]any{rootCAKey: string(c.CA)} }

func (c *RootCA) ensure(ctx context.Context, ns string) error {
	cm, err := c.Objects.Get(c.ConfigMaps, ns, c.Name)
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		err = c.Objects.CreateOnly(ctx, c.ConfigMaps, registry.Object{
			"metadata": map[string]any{"name": c.Name, "namespace": ns, "annotations": map[string]any{c.Annotation: c.Description}},
			"data":     c.data(),
		})
		if apierr.ReasonOf(err) == apierr.ReasonAlreadyExists {
			// A write raced ours; its event brings the namespace back.
			return nil
		}
		return err
	}
	if err != nil || c.current(cm) {
		return err
	}
	_, err = c.Objects.Update(ctx, c.ConfigMaps, ns, c.Name, "", func(cm registry.Object) registry.Object {
		if c.current(cm) {
			return nil
		}
		cm["data"] = c.data()
		child(child(cm, "metadata"), "annotations")[c.Annotation] = c.Description
		return cm
	})
	if err == nil {
		c.Log.Info("root CA bundle repaired", "namespace", ns)
	}
	if apierr.ReasonOf(err) == apierr.ReasonNotFound {
		// Deleted meanwhile: its delete event brings the namespace back.
		return nil
	}
	return err
}

// current reports whether cm's data is exactly the bundle and cm says
// what it is for; binaryData is not looked at.
func (c *RootCA) current(cm registry.Object) bool {
	data, _ := cm["data"].(map[string]any)
	ann, _ := child(cm, "metadata")["annotations"].(map[string]any)
	desc, _ := ann[c.Annotation].(string)
	return maps.Equal(data, c.data()) && desc != ""
}
