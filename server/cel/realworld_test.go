package cel

import (
	"context"
	"strings"
	"testing"
)

// gatewayListeners is the shape and rules of a widely deployed CRD's
// listener list (rules the upstream server accepts), to hold the cost
// estimate to what real CRDs need.
const gatewayListeners = `{"type":"object","properties":{"spec":{"type":"object","properties":{
 "listeners":{"type":"array","maxItems":64,"minItems":1,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
  "items":{"type":"object","required":["name","port","protocol"],"properties":{
   "name":{"type":"string","maxLength":253,"minLength":1},
   "hostname":{"type":"string","maxLength":253,"minLength":1},
   "port":{"type":"integer","format":"int32"},
   "protocol":{"type":"string","maxLength":255,"minLength":1},
   "tls":{"type":"object","properties":{"mode":{"type":"string","enum":["Terminate","Passthrough"]}}}}},
  "x-kubernetes-validations":[
   {"message":"tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']","rule":"self.all(l, l.protocol in ['HTTP', 'TCP', 'UDP'] ? !has(l.tls) : true)"},
   {"message":"tls mode must be set and be 'Terminate' for HTTPS protocol","rule":"self.all(l, (l.protocol == 'HTTPS' && has(l.tls)) ? (l.tls.mode == '' || l.tls.mode == 'Terminate') : true)"},
   {"message":"hostname must not be specified for protocols ['TCP', 'UDP']","rule":"self.all(l, l.protocol in ['TCP', 'UDP']  ? (!has(l.hostname) || l.hostname == '') : true)"},
   {"message":"Listener name must be unique within the Gateway","rule":"self.all(l1, self.exists_one(l2, l1.name == l2.name))"},
   {"message":"Combination of port, protocol and hostname must be unique for each listener","rule":"self.all(l1, self.exists_one(l2, l1.port == l2.port && l1.protocol == l2.protocol && (has(l1.hostname) && has(l2.hostname) ? l1.hostname == l2.hostname : !has(l1.hostname) && !has(l2.hostname))))"}]}}}}}`

func TestRealWorldRules(t *testing.T) {
	v, errs := Compile(mustSchema(t, gatewayListeners), rootPath_)
	if errs != nil {
		t.Fatal(joinErrs(errs))
	}
	got := errStrings(v.Validate(context.Background(), mustObj(t, `{"spec":{"listeners":[
		{"name":"a","port":80,"protocol":"HTTP","tls":{"mode":"Terminate"}},
		{"name":"a","port":80,"protocol":"HTTP"}]}}`), nil))
	want := []string{
		`spec.listeners: Invalid value: "array": tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']`,
		`spec.listeners: Invalid value: "array": Listener name must be unique within the Gateway`,
		`spec.listeners: Invalid value: "array": Combination of port, protocol and hostname must be unique for each listener`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
