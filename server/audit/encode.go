package audit

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"platd/codec"
)

// Events are encoded by hand: every audited request writes one to three of
// them, and reflection-driven encoding cost more than the rest of the
// audit path together. The output is byte for byte what encoding/json
// writes for Event (TestAppendEventMatchesEncodingJSON).

// appendEvent appends ev as one compact JSON object.
func appendEvent(b []byte, ev *Event) ([]byte, error) {
	b = append(b, `{"kind":`...)
	b = codec.AppendJSONString(b, ev.Kind)
	b = append(b, `,"apiVersion":`...)
	b = codec.AppendJSONString(b, ev.APIVersion)
	b = append(b, `,"level":`...)
	b = codec.AppendJSONString(b, ev.Level)
	b = append(b, `,"auditID":`...)
	b = codec.AppendJSONString(b, ev.AuditID)
	b = append(b, `,"stage":`...)
	b = codec.AppendJSONString(b, ev.Stage)
	b = append(b, `,"requestURI":`...)
	b = codec.AppendJSONString(b, ev.RequestURI)
	b = append(b, `,"verb":`...)
	b = codec.AppendJSONString(b, ev.Verb)
	b = append(b, `,"user":`...)
	b = appendUser(b, &ev.User)
	if ev.ImpersonatedUser != nil {
		b = append(b, `,"impersonatedUser":`...)
		b = appendUser(b, ev.ImpersonatedUser)
	}
	if len(ev.SourceIPs) > 0 {
		b = append(b, `,"sourceIPs":`...)
		b = codec.AppendJSONStrings(b, ev.SourceIPs)
	}
	if ev.UserAgent != "" {
		b = append(b, `,"userAgent":`...)
		b = codec.AppendJSONString(b, ev.UserAgent)
	}
	if r := ev.ObjectRef; r != nil {
		b = append(b, `,"objectRef":{`...)
		n := len(b)
		b = appendField(b, n, "resource", r.Resource)
		b = appendField(b, n, "namespace", r.Namespace)
		b = appendField(b, n, "name", r.Name)
		b = appendField(b, n, "uid", r.UID)
		b = appendField(b, n, "apiGroup", r.APIGroup)
		b = appendField(b, n, "apiVersion", r.APIVersion)
		b = appendField(b, n, "resourceVersion", r.ResourceVersion)
		b = appendField(b, n, "subresource", r.Subresource)
		b = append(b, '}')
	}
	if s := ev.ResponseStatus; s != nil {
		b = append(b, `,"responseStatus":{"metadata":{}`...)
		b = appendField(b, 0, "status", s.Status)
		b = appendField(b, 0, "message", s.Message)
		b = appendField(b, 0, "reason", string(s.Reason))
		if s.Details != nil {
			d, err := json.Marshal(s.Details)
			if err != nil {
				return nil, err
			}
			b = append(b, `,"details":`...)
			b = append(b, d...)
		}
		if s.Code != 0 {
			b = append(b, `,"code":`...)
			b = strconv.AppendInt(b, int64(s.Code), 10)
		}
		b = append(b, '}')
	}
	if len(ev.RequestObject) > 0 {
		b = append(b, `,"requestObject":`...)
		b = append(b, ev.RequestObject...)
	}
	if len(ev.ResponseObject) > 0 {
		b = append(b, `,"responseObject":`...)
		b = append(b, ev.ResponseObject...)
	}
	b = append(b, `,"requestReceivedTimestamp":"`...)
	b = time.Time(ev.RequestReceivedTimestamp).UTC().AppendFormat(b, microLayout)
	b = append(b, `","stageTimestamp":"`...)
	b = time.Time(ev.StageTimestamp).UTC().AppendFormat(b, microLayout)
	b = append(b, '"')
	if len(ev.Annotations) > 0 {
		b = append(b, `,"annotations":`...)
		b = codec.AppendJSONStringMap(b, ev.Annotations)
	}
	return append(b, '}'), nil
}

// appendField appends ,"key":"value" when value is set; the comma is left
// out when b has grown no further than open (the object's first member).
func appendField(b []byte, open int, key, value string) []byte {
	if value == "" {
		return b
	}
	if len(b) > open {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	b = append(b, `":`...)
	return codec.AppendJSONString(b, value)
}

func appendUser(b []byte, u *UserInfo) []byte {
	b = append(b, '{')
	n := len(b)
	b = appendField(b, n, "username", u.Username)
	b = appendField(b, n, "uid", u.UID)
	if len(u.Groups) > 0 {
		if len(b) > n {
			b = append(b, ',')
		}
		b = append(b, `"groups":`...)
		b = codec.AppendJSONStrings(b, u.Groups)
	}
	if len(u.Extra) > 0 {
		if len(b) > n {
			b = append(b, ',')
		}
		b = append(b, `"extra":{`...)
		keys := make([]string, 0, len(u.Extra))
		for k := range u.Extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = codec.AppendJSONString(b, k)
			b = append(b, ':')
			if u.Extra[k] == nil {
				b = append(b, "null"...)
			} else {
				b = codec.AppendJSONStrings(b, u.Extra[k])
			}
		}
		b = append(b, '}')
	}
	return append(b, '}')
}
