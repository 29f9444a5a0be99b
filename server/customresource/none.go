package customresource

import (
	"context"
	"fmt"
	"strings"

	"platd/server/registry"
	"platd/server/schema"
)

// noneConverter converts the objects of a definition with conversion
// strategy None: an object keeps its form, and only its apiVersion
// changes. Objects decode with the schema of the version they name.
// Written in another version than the storage version, an object gets
// the storage version's defaults as well: upstream applies them as it
// reads the object back from storage, the write's own answer included.
// It is immutable once built.
type noneConverter struct {
	// schemas decode the objects stored in each version of the
	// definition, served or not.
	schemas map[string]*schema.Schema
	// storageVersion is the storage version's apiVersion.
	storageVersion string
}

var _ registry.Converter = (*noneConverter)(nil)

// Schema implements registry.Converter.
func (c *noneConverter) Schema(version string) *schema.Schema { return c.schemas[version] }

// Convert implements registry.Converter.
func (c *noneConverter) Convert(_ context.Context, obj registry.Object, apiVersion string) (registry.Object, error) {
	if apiVersion == obj["apiVersion"] {
		return obj, nil
	}
	if err := c.check(obj, apiVersion); err != nil {
		return nil, err
	}
	obj["apiVersion"] = apiVersion
	if apiVersion == c.storageVersion {
		_, v, _ := strings.Cut(apiVersion, "/")
		schema.ApplyDefaults(obj, c.schemas[v])
	}
	return obj, nil
}

// ConvertList implements registry.Converter.
func (c *noneConverter) ConvertList(ctx context.Context, items []registry.Object, apiVersion string) ([]registry.Object, error) {
	for i, it := range items {
		out, err := c.Convert(ctx, it, apiVersion)
		if err != nil {
			return nil, err
		}
		items[i] = out
	}
	return items, nil
}

// check refuses, as upstream's converter does, a conversion from or to
// an apiVersion that is not one of the definition's.
func (c *noneConverter) check(obj registry.Object, apiVersion string) error {
	group, _, _ := strings.Cut(c.storageVersion, "/")
	valid := func(gv string) bool {
		v, ok := strings.CutPrefix(gv, group+"/")
		return ok && c.schemas[v] != nil
	}
	if from := str(obj, "apiVersion"); !valid(from) {
		return failure(fmt.Sprintf("request to convert CR from an invalid group/version: %s", from))
	}
	if !valid(apiVersion) {
		return failure(fmt.Sprintf("request to convert CR to an invalid group/version: %s", apiVersion))
	}
	return nil
}
