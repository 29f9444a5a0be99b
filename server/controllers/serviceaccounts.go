package controllers

import (
	"context"
	"log/slog"

	"platd/server/apierr"
	"platd/server/registry"
)

// defaultServiceAccount is the service account every namespace gets; pods
// that name none run as it.
const defaultServiceAccount = "default"

// ServiceAccounts gives every live namespace its default service account,
// and creates it again when it is deleted. An existing one is left as it
// is, whatever it holds.
type ServiceAccounts struct {
	Source   Source
	Objects  Objects
	Registry *registry.Registry
	// ServiceAccounts is the descriptor service accounts are written
	// through.
	ServiceAccounts *registry.Descriptor
	Log             *slog.Logger
}

// Run works until ctx ends. It returns after its goroutines have stopped.
func (c *ServiceAccounts) Run(ctx context.Context) {
	p := &perNamespace{
		src: c.Source, objects: c.Objects, reg: c.Registry, target: c.ServiceAccounts,
		name: defaultServiceAccount, log: c.Log, ensure: c.ensure,
	}
	p.run(ctx)
}

func (c *ServiceAccounts) ensure(ctx context.Context, ns string) error {
	_, err := c.Objects.Get(c.ServiceAccounts, ns, defaultServiceAccount)
	if apierr.ReasonOf(err) != apierr.ReasonNotFound {
		return err
	}
	err = c.Objects.CreateOnly(ctx, c.ServiceAccounts, registry.Object{
		"metadata": map[string]any{"name": defaultServiceAccount, "namespace": ns},
	})
	if apierr.ReasonOf(err) == apierr.ReasonAlreadyExists {
		return nil
	}
	if err == nil {
		c.Log.Info("default service account created", "namespace", ns)
	}
	return err
}
