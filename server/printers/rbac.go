package printers

import (
	"strings"
	"time"

	"platd/config"
	"platd/server/registry"
)

func addRBAC(p *Printers, b config.Brand) {
	g := b.Group("rbac.authorization")
	p.add(g, "v1", "rolebindings", bindingTable())
	p.add(g, "v1", "clusterrolebindings", bindingTable())
}

// bindingTable prints a role binding: its role as kind/name, then its
// subjects by kind (service accounts as namespace/name).
func bindingTable() *registry.Table {
	subjects := func(kind string) cellFunc {
		return func(o registry.Object, _ time.Time) any {
			var names []string
			for _, s := range list(o, "subjects") {
				if str(s, "kind") != kind {
					continue
				}
				if kind == "ServiceAccount" {
					names = append(names, str(s, "namespace")+"/"+str(s, "name"))
				} else {
					names = append(names, str(s, "name"))
				}
			}
			return strings.Join(names, ", ")
		}
	}
	return columns(
		nameColumn(),
		col("Role", "string", "Role the binding grants, as kind/name.", func(o registry.Object, _ time.Time) any {
			return str(o, "roleRef", "kind") + "/" + str(o, "roleRef", "name")
		}),
		ageColumn(),
		col("Users", "string", "Users the binding names.", subjects("User")).wide(),
		col("Groups", "string", "Groups the binding names.", subjects("Group")).wide(),
		col("ServiceAccounts", "string", "Service accounts the binding names.", subjects("ServiceAccount")).wide(),
	)
}
