package validation

import (
	"reflect"
	"testing"
)

func TestTolerationProblems(t *testing.T) {
	const keyRule = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
	for _, tc := range []struct {
		name string
		in   Toleration
		want []TolerationProblem
	}{
		{"key and value", Toleration{Key: "example.com/gpu", Operator: "Equal", Value: "yes", Effect: "NoSchedule"}, nil},
		{"everything tolerated", Toleration{Operator: "Exists"}, nil},
		{"seconds with NoExecute", Toleration{Key: "k", Operator: "Exists", Effect: "NoExecute", HasSeconds: true}, nil},
		{"bad key", Toleration{Key: "-k", Operator: "Exists"}, []TolerationProblem{{Member: "key", Value: "-k", Message: keyRule}}},
		{"no key, not Exists", Toleration{Value: "v"}, []TolerationProblem{
			{Member: "operator", Message: "operator must be Exists when `key` is empty, which means \"match all values and all keys\""}}},
		{"seconds without NoExecute", Toleration{Key: "k", Operator: "Exists", Effect: "NoSchedule", HasSeconds: true}, []TolerationProblem{
			{Member: "effect", Value: "NoSchedule", Message: "effect must be 'NoExecute' when `tolerationSeconds` is set"}}},
		{"bad value", Toleration{Key: "k", Value: "a b"}, []TolerationProblem{{Member: "operator", Value: "a b",
			Message: "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"}}},
		{"value with Exists", Toleration{Key: "k", Operator: "Exists", Value: "v"}, []TolerationProblem{
			{Member: "operator", Whole: true, Message: "value must be empty when `operator` is 'Exists'"}}},
		{"unknown operator and effect", Toleration{Key: "k", Operator: "In", Effect: "Evict"}, []TolerationProblem{
			{Member: "operator", Value: "In", Supported: []string{"Equal", "Exists"}},
			{Member: "effect", Value: "Evict", Supported: TaintEffects}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TolerationProblems(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
