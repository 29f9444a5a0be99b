package selector

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// golden holds facts copied from upstream captures (testdata/golden.json).
type golden struct {
	Objects []struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"objects"`
	Lists []struct {
		Capture       string   `json:"capture"`
		LabelSelector string   `json:"labelSelector"`
		FieldSelector string   `json:"fieldSelector"`
		Names         []string `json:"names"`
	} `json:"lists"`
	Errors []struct {
		Capture       string   `json:"capture"`
		LabelSelector *string  `json:"labelSelector"`
		FieldSelector *string  `json:"fieldSelector"`
		Known         []string `json:"known"`
		Message       string   `json:"message"`
	} `json:"errors"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	raw, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGoldenLists(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	for _, l := range g.Lists {
		labels, err := ParseLabels(l.LabelSelector)
		if err != nil {
			t.Fatalf("%s: %v", l.Capture, err)
		}
		fields, err := ParseFields(l.FieldSelector)
		if err != nil {
			t.Fatalf("%s: %v", l.Capture, err)
		}
		var names []string
		for _, o := range g.Objects {
			get := func(f string) (string, bool) {
				switch f {
				case "metadata.name":
					return o.Name, true
				case "metadata.namespace":
					return o.Namespace, true
				}
				return "", false
			}
			if labels.Matches(o.Labels) && fields.Matches(get) {
				names = append(names, o.Name)
			}
		}
		if !slices.Equal(names, l.Names) {
			t.Errorf("%s: selected %q, upstream returned %q", l.Capture, names, l.Names)
		}
	}
}

func TestGoldenErrors(t *testing.T) {
	t.Parallel()
	g := loadGolden(t)
	for _, e := range g.Errors {
		var got string
		switch {
		case e.LabelSelector != nil:
			_, err := ParseLabels(*e.LabelSelector)
			if err == nil {
				t.Fatalf("%s: %q parsed", e.Capture, *e.LabelSelector)
			}
			got = err.Error()
		case e.FieldSelector != nil:
			f, err := ParseFields(*e.FieldSelector)
			if err != nil {
				t.Fatalf("%s: %v", e.Capture, err)
			}
			for _, r := range f.Requirements() {
				if !slices.Contains(e.Known, r.Field) {
					got = UnknownFieldError(r.Field, e.Known)
					break
				}
			}
		}
		if got != e.Message {
			t.Errorf("%s:\n got %s\nwant %s", e.Capture, got, e.Message)
		}
	}
}
