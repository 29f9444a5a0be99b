package builtin

import (
	"testing"

	"platd/server/registry"
)

func TestLimitRangeDefaults(t *testing.T) {
	t.Parallel()
	d := descriptor(t, brand, "LimitRange")
	tests := []struct {
		name, limits string
		// want is spec.limits once defaulted.
		want string
	}{
		{"max gives default and request",
			`[{"type":"Container","max":{"cpu":"2","memory":"1Gi"}}]`,
			`[{"default":{"cpu":"2","memory":"1Gi"},"defaultRequest":{"cpu":"2","memory":"1Gi"},"max":{"cpu":"2","memory":"1Gi"},"type":"Container"}]`},
		{"default limit gives request before min",
			`[{"type":"Container","min":{"cpu":"100m"},"default":{"cpu":"500m"}}]`,
			`[{"default":{"cpu":"500m"},"defaultRequest":{"cpu":"500m"},"min":{"cpu":"100m"},"type":"Container"}]`},
		{"min gives request",
			`[{"type":"Container","min":{"memory":"64Mi"}}]`,
			`[{"defaultRequest":{"memory":"64Mi"},"min":{"memory":"64Mi"},"type":"Container"}]`},
		{"given values stay",
			`[{"type":"Container","max":{"cpu":"2"},"default":{"cpu":"1"},"defaultRequest":{"cpu":"250m"}}]`,
			`[{"default":{"cpu":"1"},"defaultRequest":{"cpu":"250m"},"max":{"cpu":"2"},"type":"Container"}]`},
		{"nothing to default writes nothing",
			`[{"type":"Container","maxLimitRequestRatio":{"cpu":"4"}}]`,
			`[{"maxLimitRequestRatio":{"cpu":"4"},"type":"Container"}]`},
		{"other types are not defaulted",
			`[{"type":"Pod","max":{"cpu":"4"}},{"type":"PersistentVolumeClaim","min":{"storage":"1Gi"}}]`,
			`[{"max":{"cpu":"4"},"type":"Pod"},{"min":{"storage":"1Gi"},"type":"PersistentVolumeClaim"}]`},
		{"amounts round up to thousandths",
			`[{"type":"Pod","max":{"cpu":"1500u"},"min":{"cpu":"1n"}},{"type":"Container","maxLimitRequestRatio":{"cpu":"1.0001"}}]`,
			`[{"max":{"cpu":"2m"},"min":{"cpu":"1m"},"type":"Pod"},{"maxLimitRequestRatio":{"cpu":"1001m"},"type":"Container"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := registry.Object{"spec": decodeJSON(t, `{"limits":`+tt.limits+`}`)}
			d.Strategy.Default(obj)
			if got := canonicalJSON(t, mapOf(obj["spec"])["limits"]); got != tt.want {
				t.Errorf("limits\n got  %s\n want %s", got, tt.want)
			}
		})
	}
}
