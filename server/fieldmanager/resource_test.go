package fieldmanager

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"platd/config"
	"platd/server/apierr"
)

// clock is a settable time source; each test owns one.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// at is the clock's reading n seconds past the test epoch, as entries
// record it.
func at(n int) string {
	return time.Date(2025, 1, 2, 3, 4, 5+n, 0, time.UTC).Format(time.RFC3339)
}

func (c *clock) set(n int) { c.t = time.Date(2025, 1, 2, 3, 4, 5+n, 0, time.UTC) }

// tracker builds the bookkeeping of a kind's writes through sub ("" the
// main resource), with status written only through its subresource when
// the kind has one, as the REST layer sets it up.
func tracker(t testing.TB, c *clock, group, version, kind, sub string) *Resource {
	t.Helper()
	s := kindSchema(t, group, version, kind)
	o := Options{Group: group, Version: version, Kind: kind, Schema: s, Subresource: sub, Now: c.now,
		LastApplied: config.Brands["plat"].LastAppliedAnnotation()}
	switch {
	case sub == "status":
		o.Only = "status"
	case sub == "" && s.Field("status") != nil:
		o.Reset = []string{"status"}
	}
	return New(o)
}

func object(t testing.TB, text string) map[string]any {
	t.Helper()
	m, ok := decodeJSON(t, text).(map[string]any)
	if !ok {
		t.Fatalf("%s is not an object", text)
	}
	return m
}

// managedOf is obj's metadata.managedFields as JSON, "null" when absent.
func managedOf(t *testing.T, obj map[string]any) string {
	t.Helper()
	mf, ok := metadata(obj)["managedFields"]
	if !ok {
		return "null"
	}
	return encodeJSON(t, mf)
}

// mfEntry is one managedFields entry as Encode writes it (keys sorted).
func mfEntry(manager, op, version, sub string, time int, fields string) string {
	s := `{"apiVersion":"` + version + `","fieldsType":"FieldsV1","fieldsV1":` + fields + `,"manager":"` + manager + `","operation":"` + op + `"`
	if sub != "" {
		s += `,"subresource":"` + sub + `"`
	}
	if time >= 0 {
		s += `,"time":"` + at(time) + `"`
	}
	return s + "}"
}

func mfList(e ...string) string { return "[" + strings.Join(e, ",") + "]" }

// update runs one non-apply write of next over live as manager and
// returns next with its recorded ownership.
func update(t *testing.T, r *Resource, live map[string]any, next, manager string) map[string]any {
	t.Helper()
	n := object(t, next)
	r.Update(live, n, manager)
	return n
}

func TestUpdateTracking(t *testing.T) {
	c := &clock{}
	c.set(0)
	r := tracker(t, c, "", "v1", "ConfigMap", "")
	const cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns","uid":"u","resourceVersion":"5","creationTimestamp":"2025-01-01T00:00:00Z","labels":{"l":"1"}},"data":{"a":"1"}}`

	created := update(t, r, nil, cm, "creator")
	wantCreated := mfList(mfEntry("creator", "Update", "v1", "", 0, `{"f:data":{".":{},"f:a":{}},"f:metadata":{"f:labels":{".":{},"f:l":{}}}}`))
	if got := managedOf(t, created); got != wantCreated {
		t.Fatalf("create: managedFields\n got %s\nwant %s", got, wantCreated)
	}

	steps := []struct {
		name    string
		at      int
		next    string // the written object, with "MF" replaced by a managedFields member or nothing
		manager string
		want    string
	}{
		{"managedFields omitted keeps the entries; a new field goes to the writer", 1,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"l":"1"}},"data":{"a":"1","b":"2"}}`, "editor",
			mfList(mfEntry("creator", "Update", "v1", "", 0, `{"f:data":{".":{},"f:a":{}},"f:metadata":{"f:labels":{".":{},"f:l":{}}}}`),
				mfEntry("editor", "Update", "v1", "", 1, `{"f:data":{"f:b":{}}}`))},
		{"a write changing nothing of its own keeps its manager's time", 2,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"l":"1"}},"data":{"a":"1","b":"2"}}`, "creator",
			mfList(mfEntry("creator", "Update", "v1", "", 0, `{"f:data":{".":{},"f:a":{}},"f:metadata":{"f:labels":{".":{},"f:l":{}}}}`),
				mfEntry("editor", "Update", "v1", "", 1, `{"f:data":{"f:b":{}}}`))},
		{"identity metadata is owned by nobody", 3,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","generation":4,"labels":{"l":"1"}},"data":{"a":"1","b":"2"}}`, "meta",
			mfList(mfEntry("creator", "Update", "v1", "", 0, `{"f:data":{".":{},"f:a":{}},"f:metadata":{"f:labels":{".":{},"f:l":{}}}}`),
				mfEntry("editor", "Update", "v1", "", 1, `{"f:data":{"f:b":{}}}`))},
		{"changing another's field takes it and refreshes the time", 4,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"l":"1"}},"data":{"a":"1","b":"3"}}`, "creator",
			mfList(mfEntry("creator", "Update", "v1", "", 4, `{"f:data":{".":{},"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{".":{},"f:l":{}}}}`))},
		{"removing a field drops it from its owner", 5,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"l":"1"}},"data":{"a":"1"}}`, "other",
			mfList(mfEntry("creator", "Update", "v1", "", 4, `{"f:data":{".":{},"f:a":{}},"f:metadata":{"f:labels":{".":{},"f:l":{}}}}`))},
		{"a new value for a field already owned refreshes the time, the set unchanged", 6,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"l":"1"}},"data":{"a":"9"}}`, "creator",
			mfList(mfEntry("creator", "Update", "v1", "", 6, `{"f:data":{".":{},"f:a":{}},"f:metadata":{"f:labels":{".":{},"f:l":{}}}}`))},
	}
	live := created
	for _, s := range steps {
		c.set(s.at)
		next := update(t, r, live, s.next, s.manager)
		if got := managedOf(t, next); got != s.want {
			t.Fatalf("%s: managedFields\n got %s\nwant %s", s.name, got, s.want)
		}
		live = next
	}
}

func TestUpdateManagedFieldsInBody(t *testing.T) {
	c := &clock{}
	c.set(0)
	r := tracker(t, c, "", "v1", "ConfigMap", "")
	live := update(t, r, nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1"}}`, "creator")
	creator := mfEntry("creator", "Update", "v1", "", 0, `{"f:data":{".":{},"f:a":{}}}`)
	other := mfEntry("other", "Update", "v1", "", 0, `{"f:data":{"f:z":{}}}`)
	cases := []struct {
		name string
		mf   string // the body's managedFields member, "" for none
		want string
	}{
		{"omitted", ``, mfList(creator, mfEntry("editor", "Update", "v1", "", 1, `{"f:data":{"f:b":{}}}`))},
		{"null", `"managedFields":null,`, mfList(creator, mfEntry("editor", "Update", "v1", "", 1, `{"f:data":{"f:b":{}}}`))},
		{"reset with []", `"managedFields":[],`, "null"},
		{"reset with [{}]", `"managedFields":[{}],`, "null"},
		{"replaced by a valid list", `"managedFields":` + mfList(other) + `,`,
			mfList(other, mfEntry("editor", "Update", "v1", "", 1, `{"f:data":{"f:b":{}}}`))},
		{"an undecodable list is ignored", `"managedFields":[{"manager":"m","operation":"Bogus"}],`,
			mfList(creator, mfEntry("editor", "Update", "v1", "", 1, `{"f:data":{"f:b":{}}}`))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.set(1)
			next := update(t, r, live, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{`+tc.mf+`"name":"x"},"data":{"a":"1","b":"2"}}`, "editor")
			if got := managedOf(t, next); got != tc.want {
				t.Fatalf("managedFields\n got %s\nwant %s", got, tc.want)
			}
			if tc.want != "null" {
				return
			}
			// With no entries left, the next update is not tracked either.
			c.set(2)
			after := update(t, r, next, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1","b":"2","c":"3"}}`, "later")
			if got := managedOf(t, after); got != "null" {
				t.Errorf("update after a reset: managedFields %s, want none", got)
			}
		})
	}
}

func TestUpdateSubresourceIgnoresBodyManagedFields(t *testing.T) {
	c := &clock{}
	c.set(0)
	main := tracker(t, c, "apps", "v1", "Deployment", "")
	status := tracker(t, c, "apps", "v1", "Deployment", "status")
	live := update(t, main, nil, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":1}}`, "creator")
	c.set(1)
	next := update(t, status, live, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","managedFields":[]},"spec":{"replicas":1},"status":{"replicas":1}}`, "ctl")
	want := mfList(
		mfEntry("creator", "Update", "apps/v1", "", 0, `{"f:spec":{"f:replicas":{}}}`),
		mfEntry("ctl", "Update", "apps/v1", "status", 1, `{"f:status":{".":{},"f:replicas":{}}}`))
	if got := managedOf(t, next); got != want {
		t.Fatalf("managedFields\n got %s\nwant %s", got, want)
	}
}

func TestStatusFilters(t *testing.T) {
	c := &clock{}
	c.set(0)
	main := tracker(t, c, "apps", "v1", "Deployment", "")
	status := tracker(t, c, "apps", "v1", "Deployment", "status")
	live := update(t, main, nil, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":1}}`, "creator")

	// A main-resource write owns no status; a status write owns only status.
	c.set(1)
	both := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":2},"status":{"replicas":2}}`
	byMain := update(t, main, live, both, "writer")
	wantMain := mfList(mfEntry("creator", "Update", "apps/v1", "", 0, `{}`)[0:0] +
		mfEntry("writer", "Update", "apps/v1", "", 1, `{"f:spec":{"f:replicas":{}}}`))
	if got := managedOf(t, byMain); got != wantMain {
		t.Errorf("main resource write: managedFields\n got %s\nwant %s", got, wantMain)
	}
	byStatus := update(t, status, live, both, "writer")
	wantStatus := mfList(mfEntry("creator", "Update", "apps/v1", "", 0, `{"f:spec":{"f:replicas":{}}}`),
		mfEntry("writer", "Update", "apps/v1", "status", 1, `{"f:status":{".":{},"f:replicas":{}}}`))
	if got := managedOf(t, byStatus); got != wantStatus {
		t.Errorf("status write: managedFields\n got %s\nwant %s", got, wantStatus)
	}

	// An apply to the main resource owns no status (the REST layer then
	// puts the stored status back).
	c.set(2)
	out, err := main.Apply(byStatus, object(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"paused":true},"status":{"replicas":9}}`), "applier", false)
	if err != nil {
		t.Fatal(err)
	}
	wantApply := mfList(mfEntry("applier", "Apply", "apps/v1", "", 2, `{"f:spec":{"f:paused":{}}}`),
		mfEntry("creator", "Update", "apps/v1", "", 0, `{"f:spec":{"f:replicas":{}}}`),
		mfEntry("writer", "Update", "apps/v1", "status", 1, `{"f:status":{".":{},"f:replicas":{}}}`))
	if got := managedOf(t, out); got != wantApply {
		t.Errorf("apply: managedFields\n got %s\nwant %s", got, wantApply)
	}
}

func TestApplyAfterUpdateWithoutConflict(t *testing.T) {
	c := &clock{}
	c.set(0)
	r := tracker(t, c, "", "v1", "ConfigMap", "")
	out, err := r.Apply(nil, object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1","b":"1"}}`), "applier", false)
	if err != nil {
		t.Fatal(err)
	}
	want := mfList(mfEntry("applier", "Apply", "v1", "", 0, `{"f:data":{"f:a":{},"f:b":{}}}`))
	if got := managedOf(t, out); got != want {
		t.Fatalf("apply: managedFields\n got %s\nwant %s", got, want)
	}
	// A non-apply write never conflicts: it takes what it changes.
	c.set(1)
	next := update(t, r, out, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"2","b":"1"}}`, "editor")
	want = mfList(mfEntry("applier", "Apply", "v1", "", 0, `{"f:data":{"f:b":{}}}`),
		mfEntry("editor", "Update", "v1", "", 1, `{"f:data":{"f:a":{}}}`))
	if got := managedOf(t, next); got != want {
		t.Fatalf("update: managedFields\n got %s\nwant %s", got, want)
	}
	// Taking the last field of an applier removes its entry.
	c.set(2)
	next = update(t, r, next, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"2","b":"2"}}`, "editor")
	want = mfList(mfEntry("editor", "Update", "v1", "", 2, `{"f:data":{"f:a":{},"f:b":{}}}`))
	if got := managedOf(t, next); got != want {
		t.Fatalf("second update: managedFields\n got %s\nwant %s", got, want)
	}
}

func TestApplyBeforeFirstApply(t *testing.T) {
	c := &clock{}
	c.set(0)
	r := tracker(t, c, "", "v1", "ConfigMap", "")
	live := object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"},"data":{"a":"1","b":"1"}}`)

	_, err := r.Apply(live, object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"},"data":{"a":"2"}}`), "applier", false)
	checkStatus(t, err, 409, `Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a`,
		`[{"reason":"FieldManagerConflict","message":"conflict with \"before-first-apply\" using v1","field":".data.a"}]`)
	if got := managedOf(t, live); got != "null" {
		t.Errorf("a failed apply changed the live object: %s", got)
	}

	c.set(1)
	out, err := r.Apply(live, object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"},"data":{"a":"1","c":"1"}}`), "applier", false)
	if err != nil {
		t.Fatal(err)
	}
	want := mfList(mfEntry("applier", "Apply", "v1", "", 1, `{"f:data":{"f:a":{},"f:c":{}}}`),
		mfEntry("before-first-apply", "Update", "v1", "", 1, `{"f:data":{".":{},"f:a":{},"f:b":{}}}`))
	if got := managedOf(t, out); got != want {
		t.Fatalf("managedFields\n got %s\nwant %s", got, want)
	}
	if got := encodeJSON(t, out["data"]); got != `{"a":"1","b":"1","c":"1"}` {
		t.Errorf("data %s", got)
	}
}

// checkStatus checks that err is a Status error of code with message and
// the causes (JSON) given.
func checkStatus(t *testing.T, err error, code int, message, causes string) {
	t.Helper()
	var se *apierr.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T), want a Status", err, err)
	}
	if int(se.Status.Code) != code || se.Status.Message != message {
		t.Errorf("status %d %q\nwant %d %q", se.Status.Code, se.Status.Message, code, message)
	}
	var got []byte
	if se.Status.Details != nil {
		got, _ = json.Marshal(se.Status.Details.Causes)
	}
	if causes != "" && string(got) != causes {
		t.Errorf("causes\n got %s\nwant %s", got, causes)
	}
}

func TestApplyConflicts(t *testing.T) {
	c := &clock{}
	c.set(0)
	r := tracker(t, c, "", "v1", "ConfigMap", "")
	sub := tracker(t, c, "", "v1", "ConfigMap", "sub")
	live := update(t, r, nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1","b":"1"}}`, "up")
	live, err := r.Apply(live, object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"c":"1"}}`), "ap", false)
	if err != nil {
		t.Fatal(err)
	}
	live, err = sub.Apply(live, object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"d":"1"}}`), "subap", false)
	if err != nil {
		t.Fatal(err)
	}
	live = update(t, sub, live, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1","b":"1","c":"1","d":"1","e":"1"}}`, "subup")

	cases := []struct {
		name, data, message, causes string
	}{
		{"one Update manager", `{"a":"2"}`,
			`Apply failed with 1 conflict: conflict with "up" using v1: .data.a`,
			`[{"reason":"FieldManagerConflict","message":"conflict with \"up\" using v1","field":".data.a"}]`},
		{"one Apply manager", `{"c":"2"}`,
			`Apply failed with 1 conflict: conflict with "ap": .data.c`,
			`[{"reason":"FieldManagerConflict","message":"conflict with \"ap\"","field":".data.c"}]`},
		{"an Apply manager of a subresource", `{"d":"2"}`,
			`Apply failed with 1 conflict: conflict with "subap" with subresource "sub": .data.d`, ""},
		{"an Update manager of a subresource", `{"e":"2"}`,
			`Apply failed with 1 conflict: conflict with "subup" with subresource "sub" using v1: .data.e`, ""},
		{"several managers", `{"a":"2","b":"2","c":"2","e":"2"}`,
			"Apply failed with 4 conflicts: conflicts with \"ap\":\n- .data.c\nconflicts with \"subup\" with subresource \"sub\" using v1:\n- .data.e\nconflicts with \"up\" using v1:\n- .data.a\n- .data.b",
			`[{"reason":"FieldManagerConflict","message":"conflict with \"ap\"","field":".data.c"},` +
				`{"reason":"FieldManagerConflict","message":"conflict with \"subup\" with subresource \"sub\" using v1","field":".data.e"},` +
				`{"reason":"FieldManagerConflict","message":"conflict with \"up\" using v1","field":".data.a"},` +
				`{"reason":"FieldManagerConflict","message":"conflict with \"up\" using v1","field":".data.b"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			config := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":` + tc.data + `}`
			_, err := r.Apply(live, object(t, config), "x", false)
			checkStatus(t, err, 409, tc.message, tc.causes)
			// force takes the fields.
			out, err := r.Apply(live, object(t, config), "x", true)
			if err != nil {
				t.Fatalf("forced: %v", err)
			}
			for k, v := range object(t, tc.data) {
				if got := out["data"].(map[string]any)[k]; got != v {
					t.Errorf("forced: data.%s = %v", k, got)
				}
			}
		})
	}
}

func TestApplyTypeParsed(t *testing.T) {
	c := &clock{}
	c.set(0)
	r := tracker(t, c, "", "v1", "ConfigMap", "")
	if _, err := r.Apply(nil, object(t, `{"apiVersion":"/v1","kind":"ConfigMap","metadata":{"name":"x"}}`), "m", false); err != nil {
		t.Errorf("apiVersion /v1 of a core kind: %v", err)
	}
	d := tracker(t, c, "apps", "v1", "Deployment", "")
	for _, av := range []string{"v1", "/v1", "apps/", "apps/v1/x"} {
		_, err := d.Apply(nil, object(t, `{"apiVersion":"`+av+`","kind":"Deployment","metadata":{"name":"x"}}`), "m", false)
		if se := apierr.FromError(err); se.Status.Code != 400 || !strings.HasPrefix(se.Status.Message, "invalid object type: ") {
			t.Errorf("apiVersion %s of a Deployment: %v", av, err)
		}
	}
}

// A live object that does not fit its schema fails the first apply to
// it, in upstream's words.
func TestApplyToUntypableLiveObject(t *testing.T) {
	c := &clock{}
	c.set(0)
	r := tracker(t, c, "", "v1", "ConfigMap", "")
	live := object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"},"data":{"k":1}}`)
	_, err := r.Apply(live, object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"},"data":{"j":"1"}}`), "m", false)
	want := "failed to create manager for existing fields: failed to convert new object (ns/x; /v1, Kind=ConfigMap) to smd typed: .data.k: expected string, got &value.valueUnstructured{Value:1}"
	if se := apierr.FromError(err); se.Status.Code != 500 || se.Status.Message != want {
		t.Errorf("error %d %q\nwant 500 %q", se.Status.Code, se.Status.Message, want)
	}
	// Tracked, the object is typed as the merge's live object.
	r.Update(nil, live, "creator")
	metadata(live)["managedFields"] = entries(t, mfList(mfEntry("creator", "Update", "v1", "", 0, `{"f:data":{"f:k":{}}}`)))
	_, err = r.Apply(live, object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"},"data":{"j":"1"}}`), "m", false)
	want = "failed to create typed live object (ns/x; /v1, Kind=ConfigMap): .data.k: expected string, got &value.valueUnstructured{Value:1}"
	if se := apierr.FromError(err); se.Status.Code != 500 || se.Status.Message != want {
		t.Errorf("error %d %q\nwant 500 %q", se.Status.Code, se.Status.Message, want)
	}
}

func TestApplyRefuses(t *testing.T) {
	c := &clock{}
	c.set(0)
	r := tracker(t, c, "", "v1", "ConfigMap", "")
	cases := []struct {
		name, config, want string
		code               int
	}{
		{"another kind", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}`, "invalid object type: /v1, Kind=Secret", 400},
		{"another version", `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"x"}}`, "invalid object type: /v2, Kind=ConfigMap", 400},
		{"an apiVersion of three parts", `{"apiVersion":"a/b/c","kind":"ConfigMap","metadata":{"name":"x"}}`, "invalid object type: /, Kind=", 400},
		{"managedFields", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","managedFields":[]}}`, "metadata.managedFields must be nil", 400},
		{"an undeclared field", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"},"spec":{"foo":1}}`,
			"failed to create typed patch object (ns/x; /v1, Kind=ConfigMap): .spec: field not declared in schema", 500},
		{"no namespace", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"spec":{}}`,
			"failed to create typed patch object (/x; /v1, Kind=ConfigMap): .spec: field not declared in schema", 500},
		{"no metadata", `{"apiVersion":"v1","kind":"ConfigMap","spec":{}}`,
			"failed to create typed patch object (/; /v1, Kind=ConfigMap): .spec: field not declared in schema", 500},
		{"a wrong type", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"},"data":{"k":1}}`,
			"failed to create typed patch object (ns/x; /v1, Kind=ConfigMap): .data.k: expected string, got &value.valueUnstructured{Value:1}", 500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Apply(nil, object(t, tc.config), "m", false)
			if err == nil {
				t.Fatal("applied")
			}
			se := apierr.FromError(err)
			if int(se.Status.Code) != tc.code || se.Status.Message != tc.want {
				t.Errorf("error %d %q\nwant %d %q", se.Status.Code, se.Status.Message, tc.code, tc.want)
			}
		})
	}
}

func TestPrintManager(t *testing.T) {
	cases := []struct {
		id   ident
		want string
	}{
		{ident{Manager: "m", Operation: OpApply}, `"m"`},
		{ident{Manager: "m", Operation: OpApply, Subresource: "status"}, `"m" with subresource "status"`},
		{ident{Manager: "m", Operation: OpUpdate, APIVersion: "v1"}, `"m" using v1`},
		{ident{Manager: "m", Operation: OpUpdate, APIVersion: "apps/v1", Subresource: "scale"}, `"m" with subresource "scale" using apps/v1`},
	}
	for _, c := range cases {
		if got := printManager(c.id.key()); got != c.want {
			t.Errorf("printManager(%s) = %s, want %s", c.id.key(), got, c.want)
		}
	}
	if got := printManager("not json"); got != `"not json"` {
		t.Errorf("printManager of a plain name = %s", got)
	}
}

// A list repeating a key passes validation for some types (a pod's env);
// its writes are still tracked and applies to it still merge, as
// upstream, while an applied configuration may not repeat a key.
func TestDuplicateKeysInLiveObjects(t *testing.T) {
	c := &clock{}
	c.set(0)
	r := tracker(t, c, "", "v1", "Pod", "")
	const pod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"i","env":[{"name":"A","value":"1"},{"name":"A","value":"2"}]}]}}`
	live := update(t, r, nil, pod, "creator")
	want := mfList(mfEntry("creator", "Update", "v1", "", 0,
		`{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"A\"}":{}},"f:image":{},"f:name":{}}}}}`))
	if got := managedOf(t, live); got != want {
		t.Fatalf("create: managedFields\n got %s\nwant %s", got, want)
	}
	c.set(1)
	out, err := r.Apply(live, object(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"b"}}}`), "applier", false)
	if err != nil {
		t.Fatalf("apply to an object with a repeated key: %v", err)
	}
	if got := encodeJSON(t, out["spec"]); !strings.Contains(got, `"env":[{"name":"A","value":"1"},{"name":"A","value":"2"}]`) {
		t.Errorf("apply lost the repeated items: %s", got)
	}
	_, err = r.Apply(live, object(t, pod), "applier", false)
	if err == nil || !strings.Contains(err.Error(), `failed to create typed patch object (ns/p; /v1, Kind=Pod): .spec.containers[name="c"].env: duplicate entries for key [name="A"]`) {
		t.Errorf("applying a repeated key: %v", err)
	}
}

func TestApplyReleasesFields(t *testing.T) {
	c := &clock{}
	c.set(0)
	r := tracker(t, c, "", "v1", "ConfigMap", "")
	live, err := r.Apply(nil, object(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1","b":"1"}}`), "ap", false)
	if err != nil {
		t.Fatal(err)
	}
	c.set(1)
	live = update(t, r, live, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1","b":"1","c":"1"}}`, "up")
	steps := []struct {
		name, config, data, managed string
	}{
		{"the same configuration changes nothing, not even the time", `{"a":"1","b":"1"}`, `{"a":"1","b":"1","c":"1"}`,
			mfList(mfEntry("ap", "Apply", "v1", "", 0, `{"f:data":{"f:a":{},"f:b":{}}}`), mfEntry("up", "Update", "v1", "", 1, `{"f:data":{"f:c":{}}}`))},
		{"a field left out of the configuration is removed", `{"a":"1"}`, `{"a":"1","c":"1"}`,
			mfList(mfEntry("ap", "Apply", "v1", "", 3, `{"f:data":{"f:a":{}}}`), mfEntry("up", "Update", "v1", "", 1, `{"f:data":{"f:c":{}}}`))},
		{"a configuration of identity only releases everything", ``, `{"c":"1"}`,
			mfList(mfEntry("up", "Update", "v1", "", 1, `{"f:data":{"f:c":{}}}`))},
	}
	for i, s := range steps {
		c.set(2 + i)
		config := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`
		if s.config != "" {
			config = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":` + s.config + `}`
		}
		out, err := r.Apply(live, object(t, config), "ap", false)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := encodeJSON(t, out["data"]); got != s.data {
			t.Errorf("%s: data %s, want %s", s.name, got, s.data)
		}
		if got := managedOf(t, out); got != s.managed {
			t.Fatalf("%s: managedFields\n got %s\nwant %s", s.name, got, s.managed)
		}
		live = out
	}
}

// A create is always tracked, whatever its body's managedFields say.
func TestCreateWithManagedFieldsInBody(t *testing.T) {
	c := &clock{}
	c.set(1)
	r := tracker(t, c, "", "v1", "ConfigMap", "")
	creator := mfEntry("creator", "Update", "v1", "", 1, `{"f:data":{".":{},"f:a":{}}}`)
	other := mfEntry("other", "Update", "v1", "", 0, `{"f:data":{"f:z":{}}}`)
	cases := []struct{ name, mf, want string }{
		{"reset with []", `"managedFields":[],`, mfList(creator)},
		{"reset with [{}]", `"managedFields":[{}],`, mfList(creator)},
		{"a valid list is kept", `"managedFields":` + mfList(other) + `,`, mfList(other, creator)},
		{"an undecodable list is dropped", `"managedFields":[{"manager":"m"}],`, mfList(creator)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			next := update(t, r, nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{`+tc.mf+`"name":"x"},"data":{"a":"1"}}`, "creator")
			if got := managedOf(t, next); got != tc.want {
				t.Errorf("managedFields\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
