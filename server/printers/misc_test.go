package printers

import (
	"testing"
	"time"
)

func TestSchedulingNodeCoordinationPrinters(t *testing.T) {
	b := testBrand(t, "plat")
	p := New(b)
	checkTable(t, p.For(b.Group("scheduling"), "v1", "priorityclasses"), []colSpec{nameSpec, int0("Value"), bool0("Global-Default"), ageSpec, str0("PreemptionPolicy")}, []printerCase{
		{name: "critical", obj: `{` + meta("system-cluster-critical") + `,"value":2000000000,"preemptionPolicy":"PreemptLowerPriority"}`, cells: []any{"system-cluster-critical", int64(2000000000), false, "60m", "PreemptLowerPriority"}},
		{name: "global default", obj: `{` + meta("low") + `,"value":-10,"globalDefault":true}`, cells: []any{"low", int64(-10), true, "60m", ""}},
	})
	checkTable(t, p.For(b.Group("node"), "v1", "runtimeclasses"), []colSpec{nameSpec, str0("Handler"), ageSpec}, []printerCase{
		{name: "gvisor", obj: `{` + meta("gvisor") + `,"handler":"runsc"}`, cells: []any{"gvisor", "runsc", "60m"}},
	})
	checkTable(t, p.For(b.Group("coordination"), "v1", "leases"), []colSpec{nameSpec, str0("Holder"), ageSpec}, []printerCase{
		{name: "held", obj: `{` + meta("controller") + `,"spec":{"holderIdentity":"cp-1_abc","leaseDurationSeconds":15}}`, cells: []any{"controller", "cp-1_abc", "60m"}},
		{name: "free", obj: `{` + meta("l") + `,"spec":{}}`, cells: []any{"l", "", "60m"}},
	})
}

func TestCSRPrinter(t *testing.T) {
	b := testBrand(t, "plat")
	p := New(b)
	cols := []colSpec{nameSpec, ageSpec, str0("SignerName"), str0("Requestor"), str0("RequestedDuration"), str0("Condition")}
	checkTable(t, p.For(b.Group("certificates"), "v1", "certificatesigningrequests"), cols, []printerCase{
		{
			name:  "approved and issued",
			obj:   `{` + meta("csr-1") + `,"spec":{"signerName":"example.com/serving","username":"system:node:n1","expirationSeconds":86400},"status":{"conditions":[{"type":"Approved","status":"True"}],"certificate":"LS0t"}}`,
			cells: []any{"csr-1", "60m", "example.com/serving", "system:node:n1", "24h", "Approved,Issued"},
		},
		{
			name:  "denied wins, failed",
			obj:   `{` + meta("csr-2") + `,"spec":{"username":"u"},"status":{"conditions":[{"type":"Approved","status":"True"},{"type":"Denied","status":"True"},{"type":"Failed","status":"True"}]}}`,
			cells: []any{"csr-2", "60m", "<none>", "u", "<none>", "Denied,Failed"},
		},
		{
			name:  "pending",
			obj:   `{` + meta("csr-3") + `,"spec":{"signerName":"s","username":"u","expirationSeconds":600}}`,
			cells: []any{"csr-3", "60m", "s", "u", "10m", "Pending"},
		},
	})
}

func TestBindingPrinters(t *testing.T) {
	b := testBrand(t, "plat")
	p := New(b)
	cols := []colSpec{nameSpec, str0("Role"), ageSpec, str1("Users"), str1("Groups"), str1("ServiceAccounts")}
	obj := `{` + meta("rb") + `,"roleRef":{"apiGroup":"` + b.Group("rbac.authorization") + `","kind":"ClusterRole","name":"view"},"subjects":[
		{"kind":"User","name":"alice"},{"kind":"Group","name":"devs"},{"kind":"User","name":"bob"},
		{"kind":"ServiceAccount","namespace":"ci","name":"runner"},{"kind":"ServiceAccount","namespace":"ci","name":"deployer"},{"kind":"Robot","name":"r2"}]}`
	want := []any{"rb", "ClusterRole/view", "60m", "alice, bob", "devs", "ci/runner, ci/deployer"}
	for _, res := range []string{"rolebindings", "clusterrolebindings"} {
		t.Run(res, func(t *testing.T) {
			checkTable(t, p.For(b.Group("rbac.authorization"), "v1", res), cols, []printerCase{
				{name: "subjects", obj: obj, cells: want},
				{name: "no subjects", obj: `{` + meta("e") + `,"roleRef":{"kind":"Role","name":"r"}}`, cells: []any{"e", "Role/r", "60m", "", "", ""}},
			})
		})
	}
}

func TestAdmissionPrinters(t *testing.T) {
	b := testBrand(t, "plat")
	p := New(b)
	g := b.Group("admissionregistration")
	for _, res := range []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"} {
		checkTable(t, p.For(g, "v1", res), []colSpec{nameSpec, int0("Webhooks"), ageSpec}, []printerCase{
			{name: res, obj: `{` + meta("hooks") + `,"webhooks":[{"name":"a.example.com"},{"name":"b.example.com"}]}`, cells: []any{"hooks", int64(2), "60m"}},
		})
	}
	checkTable(t, p.For(g, "v1", "validatingadmissionpolicies"), []colSpec{nameSpec, int0("Validations"), str0("ParamKind"), ageSpec}, []printerCase{
		{name: "with params", obj: `{` + meta("vap") + `,"spec":{"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},"validations":[{"expression":"true"}]}}`, cells: []any{"vap", int64(1), "v1/ConfigMap", "60m"}},
		{name: "without", obj: `{` + meta("vap") + `,"spec":{}}`, cells: []any{"vap", int64(0), "<unset>", "60m"}},
	})
	checkTable(t, p.For(g, "v1", "validatingadmissionpolicybindings"), []colSpec{nameSpec, str0("PolicyName"), str0("ParamRef"), ageSpec}, []printerCase{
		{name: "namespaced param", obj: `{` + meta("b") + `,"spec":{"policyName":"vap","paramRef":{"name":"limits","namespace":"ns"}}}`, cells: []any{"b", "vap", "ns/limits", "60m"}},
		{name: "any namespace", obj: `{` + meta("b") + `,"spec":{"policyName":"vap","paramRef":{"name":"limits"}}}`, cells: []any{"b", "vap", "*/limits", "60m"}},
		{
			name:  "selector",
			obj:   `{` + meta("b") + `,"spec":{"policyName":"vap","paramRef":{"selector":{"matchLabels":{"env":"prod"}}}}}`,
			cells: []any{"b", "vap", "&LabelSelector{MatchLabels:map[string]string{env: prod,},MatchExpressions:[]LabelSelectorRequirement{},}", "60m"},
		},
		{name: "no param", obj: `{` + meta("b") + `,"spec":{"policyName":"vap"}}`, cells: []any{"b", "vap", "<unset>", "60m"}},
		{name: "empty param", obj: `{` + meta("b") + `,"spec":{"policyName":"vap","paramRef":{"parameterNotFoundAction":"Deny"}}}`, cells: []any{"b", "vap", "<unset>", "60m"}},
	})
}

func TestFlowControlPrinters(t *testing.T) {
	b := testBrand(t, "plat")
	p := New(b)
	g := b.Group("flowcontrol.apiserver")
	checkTable(t, p.For(g, "v1", "flowschemas"), []colSpec{nameSpec, str0("PriorityLevel"), str0("MatchingPrecedence"), str0("DistinguisherMethod"), ageSpec, str0("MissingPL")}, []printerCase{
		{
			name:  "per user",
			obj:   `{` + meta("workload") + `,"spec":{"priorityLevelConfiguration":{"name":"workload-low"},"matchingPrecedence":9000,"distinguisherMethod":{"type":"ByUser"}},"status":{"conditions":[{"type":"Dangling","status":"False"}]}}`,
			cells: []any{"workload", "workload-low", int64(9000), "ByUser", "60m", "False"},
		},
		{
			name:  "no distinguisher, no status",
			obj:   `{` + meta("exempt") + `,"spec":{"priorityLevelConfiguration":{"name":"exempt"},"matchingPrecedence":1}}`,
			cells: []any{"exempt", "exempt", int64(1), "<none>", "60m", "?"},
		},
	})
	checkTable(t, p.For(g, "v1", "prioritylevelconfigurations"), []colSpec{
		nameSpec, str0("Type"), str0("NominalConcurrencyShares"), str0("Queues"), str0("HandSize"), str0("QueueLengthLimit"), ageSpec,
	}, []printerCase{
		{
			name:  "queuing",
			obj:   `{` + meta("global-default") + `,"spec":{"type":"Limited","limited":{"nominalConcurrencyShares":20,"limitResponse":{"type":"Queue","queuing":{"queues":128,"handSize":6,"queueLengthLimit":50}}}}}`,
			cells: []any{"global-default", "Limited", int64(20), int64(128), int64(6), int64(50), "60m"},
		},
		{
			name:  "reject, explicit zero shares",
			obj:   `{` + meta("catch") + `,"spec":{"type":"Limited","limited":{"nominalConcurrencyShares":0,"limitResponse":{"type":"Reject"}}}}`,
			cells: []any{"catch", "Limited", int64(0), "<none>", "<none>", "<none>", "60m"},
		},
		{
			name:  "exempt",
			obj:   `{` + meta("exempt") + `,"spec":{"type":"Exempt","exempt":{}}}`,
			cells: []any{"exempt", "Exempt", "<none>", "<none>", "<none>", "<none>", "60m"},
		},
	})
}

func TestAPIServicePrinter(t *testing.T) {
	b := testBrand(t, "plat")
	p := New(b)
	cols := []colSpec{nameSpec, str0("Service"), str0("Available"), ageSpec}
	created := `"creationTimestamp":"` + ago(4*time.Minute+time.Second) + `"`
	checkTable(t, p.For(b.Group("apiregistration"), "v1", "apiservices"), cols, []printerCase{
		{
			name:  "local",
			obj:   `{"metadata":{"name":"v1.apps",` + created + `},"spec":{"group":"apps","version":"v1"},"status":{"conditions":[{"type":"Available","status":"True","reason":"Local"}]}}`,
			cells: []any{"v1.apps", "Local", "True", "4m1s"},
		},
		{
			name:  "remote failing",
			obj:   `{"metadata":{"name":"v1beta1.metrics.example.com"},"spec":{"service":{"namespace":"monitoring","name":"metrics","port":443}},"status":{"conditions":[{"type":"Available","status":"False","reason":"MissingEndpoints"}]}}`,
			cells: []any{"v1beta1.metrics.example.com", "monitoring/metrics", "False (MissingEndpoints)", "<unknown>"},
		},
		{
			name:  "false without reason",
			obj:   `{"metadata":{"name":"a"},"status":{"conditions":[{"type":"Other","status":"True"},{"type":"Available","status":"False"}]}}`,
			cells: []any{"a", "Local", "False", "<unknown>"},
		},
		{
			name:  "no condition",
			obj:   `{"metadata":{"name":"a"}}`,
			cells: []any{"a", "Local", "Unknown", "<unknown>"},
		},
	})
}
