package printers

import (
	"testing"
	"time"
)

// meta is a metadata member with a name and an age of one hour.
func meta(name string) string {
	return `"metadata":{"name":"` + name + `","creationTimestamp":"` + ago(time.Hour) + `"}`
}

func TestServicePrinter(t *testing.T) {
	p := New(testBrand(t, "plat"))
	cols := []colSpec{nameSpec, str0("Type"), str0("Cluster-IP"), str0("External-IP"), str0("Port(s)"), ageSpec, str1("Selector")}
	checkTable(t, p.For("", "v1", "services"), cols, []printerCase{
		{
			name:  "cluster IP",
			obj:   `{` + meta("web") + `,"spec":{"type":"ClusterIP","clusterIP":"10.0.0.10","clusterIPs":["10.0.0.10"],"ports":[{"port":80,"protocol":"TCP"},{"port":443,"protocol":"TCP"}],"selector":{"app":"web","tier":"fe"}}}`,
			cells: []any{"web", "ClusterIP", "10.0.0.10", "<none>", "80/TCP,443/TCP", "60m", "app=web,tier=fe"},
		},
		{
			name:  "node port with external IPs",
			obj:   `{` + meta("np") + `,"spec":{"type":"NodePort","clusterIPs":["10.0.0.11","fd00::b"],"externalIPs":["1.2.3.4","5.6.7.8"],"ports":[{"port":80,"nodePort":30080,"protocol":"TCP"},{"port":53,"protocol":"UDP"}]}}`,
			cells: []any{"np", "NodePort", "10.0.0.11", "1.2.3.4,5.6.7.8", "80:30080/TCP,53/UDP", "60m", "<none>"},
		},
		{
			name:  "load balancer pending",
			obj:   `{` + meta("lb") + `,"spec":{"type":"LoadBalancer","clusterIPs":["10.0.0.12"],"ports":[{"port":80,"nodePort":31000,"protocol":"TCP"}]}}`,
			cells: []any{"lb", "LoadBalancer", "10.0.0.12", "<pending>", "80:31000/TCP", "60m", "<none>"},
		},
		{
			name:  "load balancer ingress, sorted, hostname without IP, not clipped",
			obj:   `{` + meta("lb") + `,"spec":{"type":"LoadBalancer","clusterIPs":["10.0.0.12"],"externalIPs":["9.9.9.9"]},"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.20"},{"hostname":"lb.example.com"},{"ip":"203.0.113.10","hostname":"x"}]}}}`,
			cells: []any{"lb", "LoadBalancer", "10.0.0.12", "203.0.113.10,203.0.113.20,lb.example.com,9.9.9.9", "<none>", "60m", "<none>"},
		},
		{
			name:  "external name, headless",
			obj:   `{` + meta("ext") + `,"spec":{"type":"ExternalName","externalName":"db.example.com"}}`,
			cells: []any{"ext", "ExternalName", "<none>", "db.example.com", "<none>", "60m", "<none>"},
		},
		{
			name:  "headless cluster IP",
			obj:   `{` + meta("h") + `,"spec":{"type":"ClusterIP","clusterIP":"None","clusterIPs":["None"],"ports":[{"port":5432,"protocol":"TCP"}]}}`,
			cells: []any{"h", "ClusterIP", "None", "<none>", "5432/TCP", "60m", "<none>"},
		},
		{
			name:  "no type",
			obj:   `{` + meta("x") + `,"spec":{}}`,
			cells: []any{"x", "", "<none>", "<unknown>", "<none>", "60m", "<none>"},
		},
	})
}

func TestNodePrinter(t *testing.T) {
	cols := []colSpec{nameSpec, str0("Status"), str0("Roles"), ageSpec, str0("Version"),
		str1("Internal-IP"), str1("External-IP"), str1("OS-Image"), str1("Kernel-Version"), str1("Container-Runtime")}
	for _, brand := range []string{"plat", "kubernetes"} {
		t.Run(brand, func(t *testing.T) {
			b := testBrand(t, brand)
			role := func(r string) string { return `"node-role.` + b.LongDomain + `/` + r + `":""` }
			checkTable(t, New(b).For("", "v1", "nodes"), cols, []printerCase{
				{
					name: "ready control plane",
					obj: `{"metadata":{"name":"n1","creationTimestamp":"` + ago(50*time.Hour) + `","labels":{` + role("control-plane") + `,` + role("etcd") + `,"` + b.Label("role") + `":"master","other":"x"}},
						"status":{"conditions":[{"type":"MemoryPressure","status":"False"},{"type":"Ready","status":"True"}],
						"addresses":[{"type":"Hostname","address":"n1"},{"type":"InternalIP","address":"192.168.0.10"},{"type":"InternalIP","address":"192.168.0.11"},{"type":"ExternalIP","address":"203.0.113.1"}],
						"nodeInfo":{"kubeletVersion":"v1.32.0","osImage":"Debian 12","kernelVersion":"6.1.0","containerRuntimeVersion":"containerd://1.7.0"}}}`,
					cells: []any{"n1", "Ready", "control-plane,etcd,master", "2d2h", "v1.32.0", "192.168.0.10", "203.0.113.1", "Debian 12", "6.1.0", "containerd://1.7.0"},
				},
				{
					name:  "not ready and cordoned",
					obj:   `{` + meta("n2") + `,"spec":{"unschedulable":true},"status":{"conditions":[{"type":"Ready","status":"Unknown"}]}}`,
					cells: []any{"n2", "NotReady,SchedulingDisabled", "<none>", "60m", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
				},
				{
					name:  "no conditions",
					obj:   `{"metadata":{"name":"n3","labels":{"` + b.Label("role") + `":"","node-role.` + b.LongDomain + `/":""}}}`,
					cells: []any{"n3", "Unknown", "<none>", "<unknown>", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
				},
			})
		})
	}
}

func TestEndpointsPrinter(t *testing.T) {
	p := New(testBrand(t, "plat"))
	checkTable(t, p.For("", "v1", "endpoints"), []colSpec{nameSpec, str0("Endpoints"), ageSpec}, []printerCase{
		{name: "none", obj: `{` + meta("e") + `}`, cells: []any{"e", "<none>", "60m"}},
		{
			name:  "ports",
			obj:   `{` + meta("e") + `,"subsets":[{"addresses":[{"ip":"10.1.0.1"},{"ip":"fd00::1"}],"ports":[{"name":"http","port":8080}]}]}`,
			cells: []any{"e", "10.1.0.1:8080,[fd00::1]:8080", "60m"},
		},
		{
			name:  "headless without ports",
			obj:   `{` + meta("e") + `,"subsets":[{"addresses":[{"ip":"10.1.0.1"},{"ip":"10.1.0.2"}]}]}`,
			cells: []any{"e", "10.1.0.1,10.1.0.2", "60m"},
		},
		{
			name:  "more than three",
			obj:   `{` + meta("e") + `,"subsets":[{"addresses":[{"ip":"10.1.0.1"},{"ip":"10.1.0.2"}],"ports":[{"port":80},{"port":443}]},{"addresses":[{"ip":"10.1.0.3"}]}]}`,
			cells: []any{"e", "10.1.0.1:80,10.1.0.2:80,10.1.0.1:443 + 2 more...", "60m"},
		},
	})
}

func TestPersistentVolumePrinters(t *testing.T) {
	b := testBrand(t, "plat")
	p := New(b)
	beta := `"volume.beta.` + b.LongDomain + `/storage-class"`
	checkTable(t, p.For("", "v1", "persistentvolumes"), []colSpec{
		nameSpec, str0("Capacity"), str0("Access Modes"), str0("Reclaim Policy"), str0("Status"), str0("Claim"),
		str0("StorageClass"), str0("VolumeAttributesClass"), str0("Reason"), ageSpec, str1("VolumeMode"),
	}, []printerCase{
		{
			name: "bound",
			obj: `{` + meta("pv1") + `,"spec":{"capacity":{"storage":"1024Mi"},"accessModes":["ReadWriteMany","ReadWriteOnce","ReadWriteOnce"],
				"persistentVolumeReclaimPolicy":"Retain","claimRef":{"namespace":"ns","name":"data"},"storageClassName":"fast","volumeMode":"Filesystem",
				"volumeAttributesClassName":"gold"},"status":{"phase":"Bound"}}`,
			cells: []any{"pv1", "1Gi", "RWO,RWX", "Retain", "Bound", "ns/data", "fast", "gold", "", "60m", "Filesystem"},
		},
		{
			name:  "released, beta class annotation wins, being deleted",
			obj:   `{"metadata":{"name":"pv2","deletionTimestamp":"` + ago(0) + `","annotations":{` + beta + `:"slow"}},"spec":{"accessModes":["ReadWriteOncePod","ReadOnlyMany"],"storageClassName":"fast"},"status":{"phase":"Failed","reason":"Recycler"}}`,
			cells: []any{"pv2", "0", "ROX,RWOP", "", "Terminating", "", "slow", "<unset>", "Recycler", "<unknown>", "<unset>"},
		},
	})
	checkTable(t, p.For("", "v1", "persistentvolumeclaims"), []colSpec{
		nameSpec, str0("Status"), str0("Volume"), str0("Capacity"), str0("Access Modes"),
		str0("StorageClass"), str0("VolumeAttributesClass"), ageSpec, str1("VolumeMode"),
	}, []printerCase{
		{
			name: "bound",
			obj: `{` + meta("data") + `,"spec":{"volumeName":"pv1","storageClassName":"fast","volumeMode":"Block","resources":{"requests":{"storage":"1Gi"}}},
				"status":{"phase":"Bound","capacity":{"storage":"2Gi"},"accessModes":["ReadWriteOnce"]}}`,
			cells: []any{"data", "Bound", "pv1", "2Gi", "RWO", "fast", "<unset>", "60m", "Block"},
		},
		{
			name:  "pending shows no capacity",
			obj:   `{` + meta("p") + `,"spec":{"resources":{"requests":{"storage":"1Gi"}},"storageClassName":""},"status":{"phase":"Pending","accessModes":["ReadWriteOnce"]}}`,
			cells: []any{"p", "Pending", "", "", "", "", "<unset>", "60m", "<unset>"},
		},
	})
}

func TestWorkloadCorePrinters(t *testing.T) {
	p := New(testBrand(t, "plat"))
	checkTable(t, p.For("", "v1", "podtemplates"), []colSpec{nameSpec, str0("Containers"), str0("Images"), str0("Pod Labels")}, []printerCase{
		{
			name:  "two containers",
			obj:   `{` + meta("t") + `,"template":{"metadata":{"labels":{"b":"2","a":"1"}},"spec":{"containers":[{"name":"web","image":"nginx:1"},{"name":"log","image":"busybox"}]}}}`,
			cells: []any{"t", "web,log", "nginx:1,busybox", "a=1,b=2"},
		},
		{name: "empty", obj: `{` + meta("t") + `}`, cells: []any{"t", "", "", "<none>"}},
	})
	checkTable(t, p.For("", "v1", "replicationcontrollers"), []colSpec{
		nameSpec, int0("Desired"), int0("Current"), int0("Ready"), ageSpec, str1("Containers"), str1("Images"), str1("Selector"),
	}, []printerCase{
		{
			name:  "scaled",
			obj:   `{` + meta("rc") + `,"spec":{"replicas":3,"selector":{"app":"web"},"template":{"spec":{"containers":[{"name":"web","image":"nginx"}]}}},"status":{"replicas":3,"readyReplicas":2}}`,
			cells: []any{"rc", int64(3), int64(3), int64(2), "60m", "web", "nginx", "app=web"},
		},
		{
			name:  "unset replicas mean one",
			obj:   `{` + meta("rc") + `,"spec":{}}`,
			cells: []any{"rc", int64(1), int64(0), int64(0), "60m", "", "", "<none>"},
		},
	})
}

func TestSimpleCorePrinters(t *testing.T) {
	p := New(testBrand(t, "plat"))
	checkTable(t, p.For("", "v1", "namespaces"), []colSpec{nameSpec, str0("Status"), ageSpec}, []printerCase{
		{name: "active", obj: `{` + meta("dev") + `,"status":{"phase":"Active"}}`, cells: []any{"dev", "Active", "60m"}},
		{name: "terminating", obj: `{` + meta("old") + `,"status":{"phase":"Terminating"}}`, cells: []any{"old", "Terminating", "60m"}},
	})
	checkTable(t, p.For("", "v1", "secrets"), []colSpec{nameSpec, str0("Type"), str0("Data"), ageSpec}, []printerCase{
		{name: "tls", obj: `{` + meta("cert") + `,"type":"tls","data":{"tls.crt":"eA==","tls.key":"eA=="}}`, cells: []any{"cert", "tls", int64(2), "60m"}},
		{name: "empty", obj: `{` + meta("e") + `,"type":"Opaque"}`, cells: []any{"e", "Opaque", int64(0), "60m"}},
	})
	checkTable(t, p.For("", "v1", "serviceaccounts"), []colSpec{nameSpec, str0("Secrets"), ageSpec}, []printerCase{
		{name: "default", obj: `{` + meta("default") + `}`, cells: []any{"default", int64(0), "60m"}},
		{name: "with secret", obj: `{` + meta("bot") + `,"secrets":[{"name":"bot-token"}]}`, cells: []any{"bot", int64(1), "60m"}},
	})
	checkTable(t, p.For("", "v1", "configmaps"), []colSpec{nameSpec, str0("Data"), ageSpec}, []printerCase{
		{name: "data and binary data", obj: `{` + meta("cm") + `,"data":{"a":"1","b":"2"},"binaryData":{"c":"AA=="}}`, cells: []any{"cm", int64(3), "60m"}},
	})
	checkTable(t, p.For("", "v1", "resourcequotas"), []colSpec{nameSpec, ageSpec, str0("Request"), str0("Limit")}, []printerCase{
		{
			name: "requests and limits",
			obj: `{` + meta("q") + `,"status":{"hard":{"pods":"10","requests.cpu":"1","limits.memory":"2Gi","limits.cpu":"2000m","requests.memory":"1Gi"},
				"used":{"pods":"3","requests.cpu":"500m","limits.cpu":"1"}}}`,
			cells: []any{"q", "60m", "pods: 3/10, requests.cpu: 500m/1, requests.memory: 0/1Gi", "limits.cpu: 1/2, limits.memory: 0/2Gi"},
		},
		{name: "no status", obj: `{` + meta("q") + `}`, cells: []any{"q", "60m", "", ""}},
	})
	checkTable(t, p.For("", "v1", "componentstatuses"), []colSpec{nameSpec, str0("Status"), str0("Message"), str0("Error")}, []printerCase{
		{name: "healthy", obj: `{"metadata":{"name":"etcd-0"},"conditions":[{"type":"Healthy","status":"True","message":"ok"}]}`, cells: []any{"etcd-0", "Healthy", "ok", ""}},
		{name: "unhealthy", obj: `{"metadata":{"name":"scheduler"},"conditions":[{"type":"Healthy","status":"False","message":"","error":"connection refused"}]}`, cells: []any{"scheduler", "Unhealthy", "", "connection refused"}},
		{name: "unknown", obj: `{"metadata":{"name":"x"}}`, cells: []any{"x", "Unknown", "", ""}},
	})
	if p.For("", "v1", "limitranges") != nil {
		t.Error("limitranges print the default table upstream")
	}
}

func TestEventPrinters(t *testing.T) {
	b := testBrand(t, "plat")
	p := New(b)
	cols := []colSpec{str0("Last Seen"), str0("Type"), str0("Reason"), str0("Object"), str1("Subobject"), str1("Source"),
		str0("Message"), str1("First Seen"), str1("Count"), {"Name", "string", "name", 1}}
	checkTable(t, p.For("", "v1", "events"), cols, []printerCase{
		{
			name: "legacy event",
			obj: `{"metadata":{"name":"web.17"},"involvedObject":{"kind":"Pod","name":"web","fieldPath":"spec.containers{app}"},
				"reason":"Pulled","message":"  pulled image\n","type":"Normal","source":{"component":"kubelet","host":"n1"},
				"firstTimestamp":"` + ago(10*time.Minute) + `","lastTimestamp":"` + ago(time.Minute) + `","count":4}`,
			cells: []any{"60s", "Normal", "Pulled", "pod/web", "spec.containers{app}", "kubelet, n1", "pulled image", "10m", int64(4), "web.17"},
		},
		{
			name: "new-style event with series",
			obj: `{"metadata":{"name":"e2"},"involvedObject":{"kind":"Node"},"reason":"Rebooted","type":"Warning",
				"eventTime":"2025-03-10T11:30:00.123456Z","series":{"count":7,"lastObservedTime":"2025-03-10T11:58:00.000001Z"},
				"reportingComponent":"node-controller","reportingInstance":"cp-1"}`,
			cells: []any{"119s", "Warning", "Rebooted", "node", "", "node-controller, cp-1", "", "29m", int64(7), "e2"},
		},
		{
			name:  "singleton without times",
			obj:   `{"metadata":{"name":"e3"},"involvedObject":{"kind":"ConfigMap","name":"c"},"source":{"component":"me"}}`,
			cells: []any{"<unknown>", "", "", "configmap/c", "", "me", "", "<unknown>", int64(1), "e3"},
		},
	})
	checkTable(t, p.For(b.Group("events"), "v1", "events"), cols, []printerCase{
		{
			name: "events group shape",
			obj: `{"metadata":{"name":"web.18"},"regarding":{"kind":"Deployment","name":"web"},"note":"Scaled up",
				"reason":"ScalingReplicaSet","type":"Normal","action":"Scale","reportingController":"deployment-controller",
				"eventTime":"` + ago(time.Hour) + `","deprecatedCount":2,"deprecatedFirstTimestamp":"` + ago(2*time.Hour) + `",
				"deprecatedLastTimestamp":"` + ago(5*time.Minute) + `","deprecatedSource":{"host":"h"}}`,
			cells: []any{"5m", "Normal", "ScalingReplicaSet", "deployment/web", "", "deployment-controller, h", "Scaled up", "120m", int64(2), "web.18"},
		},
		{
			name: "events group singleton",
			obj: `{"metadata":{"name":"e"},"regarding":{"kind":"Pod","name":"p"},"note":"x","reason":"R","type":"Warning",
				"reportingController":"c","reportingInstance":"i","eventTime":"` + ago(3*time.Second) + `"}`,
			cells: []any{"3s", "Warning", "R", "pod/p", "", "c, i", "x", "3s", int64(1), "e"},
		},
	})
}
