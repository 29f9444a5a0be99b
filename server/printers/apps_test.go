package printers

import "testing"

const webTemplate = `"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"},{"name":"sidecar","image":"envoy:1"}]}}`

func TestDeploymentPrinter(t *testing.T) {
	p := New(testBrand(t, "plat"))
	cols := []colSpec{nameSpec, str0("Ready"), str0("Up-to-date"), str0("Available"), ageSpec, str1("Containers"), str1("Images"), str1("Selector")}
	checkTable(t, p.For("apps", "v1", "deployments"), cols, []printerCase{
		{
			name:  "rolling",
			obj:   `{` + meta("web") + `,"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"env","operator":"NotIn","values":["dev"]}]},` + webTemplate + `},"status":{"readyReplicas":2,"updatedReplicas":1,"availableReplicas":2}}`,
			cells: []any{"web", "2/3", int64(1), int64(2), "60m", "web,sidecar", "nginx:1.27,envoy:1", "app=web,env notin (dev)"},
		},
		{
			name:  "fresh, unset replicas mean one, empty selector prints empty",
			obj:   `{` + meta("d") + `,"spec":{"selector":{}}}`,
			cells: []any{"d", "0/1", int64(0), int64(0), "60m", "", "", ""},
		},
		{
			name:  "malformed selector",
			obj:   `{` + meta("d") + `,"spec":{"replicas":0,"selector":{"matchExpressions":[{"key":"a","operator":"Bogus"}]}}}`,
			cells: []any{"d", "0/0", int64(0), int64(0), "60m", "", "", "<invalid>"},
		},
	})
}

func TestAppsPrinters(t *testing.T) {
	p := New(testBrand(t, "plat"))
	checkTable(t, p.For("apps", "v1", "replicasets"), []colSpec{
		nameSpec, int0("Desired"), int0("Current"), int0("Ready"), ageSpec, str1("Containers"), str1("Images"), str1("Selector"),
	}, []printerCase{
		{
			name:  "scaled",
			obj:   `{` + meta("web-5d8") + `,"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web","pod-template-hash":"5d8"}},` + webTemplate + `},"status":{"replicas":2,"readyReplicas":1}}`,
			cells: []any{"web-5d8", int64(2), int64(2), int64(1), "60m", "web,sidecar", "nginx:1.27,envoy:1", "app=web,pod-template-hash=5d8"},
		},
		{
			name:  "no selector",
			obj:   `{` + meta("rs") + `,"spec":{"replicas":0}}`,
			cells: []any{"rs", int64(0), int64(0), int64(0), "60m", "", "", "<none>"},
		},
	})
	checkTable(t, p.For("apps", "v1", "statefulsets"), []colSpec{nameSpec, str0("Ready"), ageSpec, str1("Containers"), str1("Images")}, []printerCase{
		{name: "db", obj: `{` + meta("db") + `,"spec":{"replicas":3,` + webTemplate + `},"status":{"readyReplicas":3}}`, cells: []any{"db", "3/3", "60m", "web,sidecar", "nginx:1.27,envoy:1"}},
	})
	checkTable(t, p.For("apps", "v1", "daemonsets"), []colSpec{
		nameSpec, int0("Desired"), int0("Current"), int0("Ready"), int0("Up-to-date"), int0("Available"), str0("Node Selector"), ageSpec,
		str1("Containers"), str1("Images"), str1("Selector"),
	}, []printerCase{
		{
			name: "agent",
			obj: `{` + meta("agent") + `,"spec":{"selector":{"matchLabels":{"app":"agent"}},"template":{"spec":{"nodeSelector":{"os":"linux"},"containers":[{"name":"a","image":"agent:2"}]}}},
				"status":{"desiredNumberScheduled":4,"currentNumberScheduled":4,"numberReady":3,"updatedNumberScheduled":2,"numberAvailable":3}}`,
			cells: []any{"agent", int64(4), int64(4), int64(3), int64(2), int64(3), "os=linux", "60m", "a", "agent:2", "app=agent"},
		},
	})
	checkTable(t, p.For("apps", "v1", "controllerrevisions"), []colSpec{nameSpec, str0("Controller"), str0("Revision"), ageSpec}, []printerCase{
		{
			name:  "owned by a stateful set",
			obj:   `{"metadata":{"name":"db-7c9","ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"x"},{"apiVersion":"apps/v1","kind":"StatefulSet","name":"db","controller":true}]},"revision":3}`,
			cells: []any{"db-7c9", "statefulset.apps/db", int64(3), "<unknown>"},
		},
		{
			name:  "core controller",
			obj:   `{"metadata":{"name":"r","ownerReferences":[{"apiVersion":"v1","kind":"ReplicationController","name":"rc","controller":true}]},"revision":1}`,
			cells: []any{"r", "replicationcontroller/rc", int64(1), "<unknown>"},
		},
		{
			name:  "no controller",
			obj:   `{"metadata":{"name":"r","ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"ds","controller":false}]},"revision":2}`,
			cells: []any{"r", "<none>", int64(2), "<unknown>"},
		},
	})
}
