// Package rbac is the role-based authorizer: roles hold rules, bindings
// grant a role to subjects. Decisions look up the bindings of the
// requesting user and its groups in an index kept current by the caller
// (Put and Delete from the store's watch), never scanning every binding.
package rbac

import (
	"encoding/json"
	"fmt"
)

// Rule wildcards and subject kinds, the same in every brand.
const (
	All = "*"

	KindUser           = "User"
	KindGroup          = "Group"
	KindServiceAccount = "ServiceAccount"
	KindRole           = "Role"
	KindClusterRole    = "ClusterRole"

	// serviceAccountPrefix starts the user name of a service account:
	// system:serviceaccount:<namespace>:<name>.
	serviceAccountPrefix = "system:serviceaccount:"
)

// PolicyRule allows verbs on resources (of API groups, optionally only the
// named objects) or on non-resource URLs.
type PolicyRule struct {
	Verbs           []string `json:"verbs"`
	APIGroups       []string `json:"apiGroups,omitempty"`
	Resources       []string `json:"resources,omitempty"`
	ResourceNames   []string `json:"resourceNames,omitempty"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

// Subject is who a binding grants its role to.
type Subject struct {
	Kind      string `json:"kind"`
	APIGroup  string `json:"apiGroup,omitempty"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// RoleRef names the role a binding grants.
type RoleRef struct {
	APIGroup string `json:"apiGroup"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

// Role is a Role (Namespace set) or a ClusterRole (Namespace empty). A
// Role handed to the Authorizer is never changed afterwards.
type Role struct {
	Namespace, Name string
	Rules           []PolicyRule
	// Aggregated says the cluster role has an aggregationRule.
	Aggregated bool
}

// Binding is a RoleBinding (Namespace set) or a ClusterRoleBinding
// (Namespace empty). A Binding handed to the Authorizer is never changed
// afterwards.
type Binding struct {
	Namespace, Name string
	RoleRef         RoleRef
	Subjects        []Subject

	// reasons are the allow reasons of each subject, rendered when the
	// binding is indexed.
	reasons []string
}

type objectMeta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// DecodeRole reads a stored Role or ClusterRole.
func DecodeRole(data []byte) (*Role, error) {
	var o struct {
		Metadata        objectMeta      `json:"metadata"`
		Rules           []PolicyRule    `json:"rules"`
		AggregationRule json.RawMessage `json:"aggregationRule"`
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("decoding role: %w", err)
	}
	agg := len(o.AggregationRule) > 0 && string(o.AggregationRule) != "null"
	return &Role{Namespace: o.Metadata.Namespace, Name: o.Metadata.Name, Rules: o.Rules, Aggregated: agg}, nil
}

// DecodeBinding reads a stored RoleBinding or ClusterRoleBinding.
func DecodeBinding(data []byte) (*Binding, error) {
	var o struct {
		Metadata objectMeta `json:"metadata"`
		RoleRef  RoleRef    `json:"roleRef"`
		Subjects []Subject  `json:"subjects"`
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("decoding role binding: %w", err)
	}
	return &Binding{Namespace: o.Metadata.Namespace, Name: o.Metadata.Name, RoleRef: o.RoleRef, Subjects: o.Subjects}, nil
}
