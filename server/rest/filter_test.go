package rest

import "testing"

func TestMatchesStored(t *testing.T) {
	t.Parallel()
	_, d := configMapHandler(t)
	pred, err := parsePredicate(d, "app=web", "metadata.name=a")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		value string
		want  bool
	}{
		{`{"metadata":{"name":"a","labels":{"app":"web"}},"data":{"k":"}{\"x"}}`, true},
		{`{"metadata":{"name":"b","labels":{"app":"web"}},"data":{}}`, false},
		{`{"metadata":{"name":"a","labels":{"app":"db"}}}`, false},
		// Metadata not first: the whole object is read.
		{`{"data":{},"metadata":{"name":"a","labels":{"app":"web"}}}`, true},
		{`{"metadata":{"name":1}}`, false},
		{`nonsense`, false},
	} {
		if got := pred.matchesStored([]byte(c.value)); got != c.want {
			t.Errorf("%s: %v, want %v", c.value, got, c.want)
		}
	}
}
