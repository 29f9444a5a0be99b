package audit

import (
	"encoding/json"
	"testing"
	"time"

	"platd/codec"
	"platd/server/apierr"
)

func TestAppendEventMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	at := MicroTime(time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600)))
	events := []Event{
		{},
		{Kind: "Event", APIVersion: "audit.x/v1", Level: "Metadata", AuditID: "id", Stage: "ResponseComplete", RequestURI: "/api?a=1&b=<2>",
			Verb: "get", RequestReceivedTimestamp: at, StageTimestamp: at},
		{Kind: "Event", User: UserInfo{Username: "a\"b\\c\n\t\r\b\f\x01\u2028\u2029é\xff", UID: "u", Groups: []string{"g1", "g2"},
			Extra: map[string][]string{"z": {"1"}, "a": nil, "m": {}}},
			ImpersonatedUser: &UserInfo{}, SourceIPs: []string{"::1", "10.0.0.1"}, UserAgent: "kubectl/v1.32",
			ObjectRef:      &ObjectReference{Resource: "pods", Name: "p", UID: "x", APIVersion: "v1", ResourceVersion: "3", Subresource: "status"},
			ResponseStatus: &ResponseStatus{Status: "Failure", Message: "m<&>", Reason: "NotFound", Details: &apierr.Details{Name: "p", Kind: "pods"}, Code: 404},
			RequestObject:  json.RawMessage(`{"a":1}`), ResponseObject: json.RawMessage(`[1,2]`),
			Annotations: map[string]string{"b": "2", "a": "1&"}},
		{ObjectRef: &ObjectReference{}, ResponseStatus: &ResponseStatus{}, User: UserInfo{Extra: map[string][]string{}}},
		{ObjectRef: &ObjectReference{Namespace: "n"}, ResponseStatus: &ResponseStatus{Code: 200}},
	}
	for i := range events {
		want, err := json.Marshal(&events[i])
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendEvent(nil, &events[i])
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("event %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("plain")
	f.Add("<\"\\\x00\u2028\xff>")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := codec.AppendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s want %s", s, got, want)
		}
	})
}
