package printers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"platd/config"
)

// FuzzPrinters feeds arbitrary JSON objects to every printer: a stored
// object of any shape must print a full row of JSON values, never panic.
func FuzzPrinters(f *testing.F) {
	var all []*Printers
	for _, name := range config.BrandNames() {
		all = append(all, New(config.Brands[name]))
	}
	hpa := "autoscaling.alpha." + config.Brands[config.BrandNames()[0]].LongDomain
	for _, seed := range []string{
		`{}`,
		`{"metadata":{"name":"a","creationTimestamp":"2025-01-01T00:00:00Z","deletionTimestamp":"x","labels":{"a":"b"},"ownerReferences":[{"controller":true,"apiVersion":"a/b/c"}]}}`,
		`{"spec":{"containers":[{"name":"a"}],"initContainers":[{"name":"i","restartPolicy":"Always"}],"selector":{"matchExpressions":[{"key":"k","operator":"In","values":[]}]}},"status":{"initContainerStatuses":[{"name":"i","started":true,"state":{"terminated":{"exitCode":1.5}}}],"containerStatuses":[null,1,"x",{"state":{"waiting":{}}}]}}`,
		`{"spec":{"metrics":[{"type":"Resource","resource":{"target":{"averageUtilization":1e300}}},{"type":"External"}]},"status":{"currentMetrics":[{"resource":null},{}]}}`,
		`{"metadata":{"annotations":{"` + hpa + `/metrics":"[{\"type\":\"Object\"}]","` + hpa + `/current-metrics":"[1]"}},"spec":{"targetCPUUtilizationPercentage":-5}}`,
		`{"subsets":[{"addresses":[{"ip":"::1"}],"ports":[{"port":-1}]}],"spec":{"ports":[{"port":"80"}],"type":"LoadBalancer"},"status":{"loadBalancer":{"ingress":[{}]}}}`,
		`{"spec":{"capacity":{"storage":"1e999999999"},"claimRef":{}},"status":{"hard":{"limits.cpu":"-1","pods":7}}}`,
		`{"spec":{"paramRef":{"selector":{"matchLabels":{"a":1}}},"limited":{"limitResponse":{"queuing":{}}}}}`,
	} {
		f.Add(seed)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, text string) {
		d := json.NewDecoder(strings.NewReader(text))
		d.UseNumber()
		var o map[string]any
		if d.Decode(&o) != nil || o == nil {
			return
		}
		o = numbersToValues(o).(map[string]any)
		for _, p := range all {
			for _, tbl := range p.tables {
				cells, conds := tbl.Row(o, now)
				if len(cells) != len(tbl.Columns) {
					t.Fatalf("%d cells for %d columns", len(cells), len(tbl.Columns))
				}
				for _, c := range cells {
					switch c.(type) {
					case string, int64, bool:
					default:
						t.Fatalf("cell %#v is not a string, integer or boolean", c)
					}
				}
				if _, err := json.Marshal(conds); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
