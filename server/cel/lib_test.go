package cel

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// libSchema declares a property of every kind the library tests read.
const libSchema = `{"type":"object","properties":{
 "s":{"type":"string","maxLength":64}, "i":{"type":"integer"}, "f":{"type":"number"}, "opt":{"type":"string","maxLength":8},
 "l":{"type":"array","maxItems":10,"items":{"type":"integer"}},
 "ls":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":8}},
 "ld":{"type":"array","maxItems":10,"items":{"type":"number"}},
 "m":{"type":"object","maxProperties":10,"additionalProperties":{"type":"string","maxLength":8}},
 "ts":{"type":"string","format":"date-time"}, "d":{"type":"string","format":"duration"}, "b":{"type":"string","format":"byte","maxLength":64},
 "ios":{"x-kubernetes-int-or-string":true,"maxLength":8},
 "set":{"type":"array","maxItems":10,"x-kubernetes-list-type":"set","items":{"type":"string","maxLength":8}},
 "dash-name":{"type":"string","maxLength":8}, "namespace":{"type":"string","maxLength":8}, "a.b":{"type":"string","maxLength":8}, "x__y":{"type":"string","maxLength":8},
 "obj":{"type":"object","properties":{"k":{"type":"string","maxLength":8},"z":{"type":"string","maxLength":8}}}
}}`

const libData = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","generateName":"w-"},
 "s":"Hello World","i":3,"f":1.5,"l":[3,1,2],"ls":["b","a","c"],"ld":[1.5,0.5],"m":{"a":"x","b":"y"},
 "ts":"2024-01-02T03:04:05Z","d":"1h30m","b":"aGVsbG8=","ios":"50%","set":["x","y"],
 "dash-name":"dn","namespace":"ns","a.b":"dot","x__y":"us","obj":{"k":"v"}}`

// TestLibraries evaluates expressions of every library; each must be
// true on libData.
func TestLibraries(t *testing.T) {
	exprs := []string{
		// standard and strings (ext.Strings v2)
		`self.s.lowerAscii() == 'hello world'`,
		`self.s.upperAscii() == 'HELLO WORLD'`,
		`self.s.split(' ') == ['Hello', 'World']`,
		`self.s.replace('World', 'You') == 'Hello You'`,
		`self.s.indexOf('o') == 4 && self.s.lastIndexOf('o') == 7`,
		`self.s.substring(0, 5) == 'Hello'`,
		`'  x '.trim() == 'x'`,
		`self.ls.join('-') == 'b-a-c'`,
		`'%s=%d'.format(['a', 1]) == 'a=1'`,
		`strings.quote('a') == '"a"'`,
		`self.s.charAt(0) == 'H'`,
		`self.s.matches('^H.*d$')`,
		`self.s.startsWith('Hell') && self.s.endsWith('rld') && self.s.contains('lo W')`,
		`size(self.s) == 11`,
		// lists library
		`!self.l.isSorted() && [1, 2, 3].isSorted() && self.set.isSorted()`,
		`self.l.sum() == 6 && self.ld.sum() == 2.0 && [].sum() == 0`,
		`self.l.min() == 1 && self.l.max() == 3 && self.ls.min() == 'a'`,
		`self.l.indexOf(1) == 1 && self.l.lastIndexOf(9) == -1 && [1, 2, 1].lastIndexOf(1) == 2`,
		// sets
		`sets.contains(self.ls, ['a', 'b']) && sets.equivalent([1, 2], [2, 1]) && sets.intersects(self.ls, ['c', 'z'])`,
		// regex
		`self.s.find('[A-Z]') == 'H' && self.s.find('z') == ''`,
		`self.s.findAll('o') == ['o', 'o'] && self.s.findAll('[a-z]', 2) == ['e', 'l']`,
		// urls
		`url('https://user@example.com:8443/a%20b?x=1&x=2#f').getScheme() == 'https'`,
		`url('https://example.com:8443/p').getHost() == 'example.com:8443'`,
		`url('https://[::1]:80/').getHostname() == '::1' && url('https://[::1]:80/').getPort() == '80'`,
		`url('https://example.com/a%20b').getEscapedPath() == '/a%20b'`,
		`url('https://example.com/?x=1&x=2&y=3').getQuery() == {'x': ['1', '2'], 'y': ['3']}`,
		`isURL('https://example.com') && !isURL('not a url')`,
		// quantity
		`quantity('1Gi').isGreaterThan(quantity('1G')) && quantity('500m').isLessThan(quantity('1'))`,
		`quantity('1.5').compareTo(quantity('1500m')) == 0 && quantity('1.5').compareTo(quantity('2')) == -1`,
		`quantity('2k').asInteger() == 2000 && quantity('1.5').asApproximateFloat() == 1.5`,
		`quantity('1.5').isInteger() == false && quantity('-3').sign() == -1`,
		`quantity('1').add(quantity('500m')).compareTo(quantity('1.5')) == 0 && quantity('1').add(2).compareTo(quantity('3')) == 0`,
		`quantity('1').sub(quantity('500m')).compareTo(quantity('0.5')) == 0 && quantity('3').sub(1).asInteger() == 2`,
		`isQuantity('10Mi') && !isQuantity('10x')`,
		`quantity('1.5') == quantity('1500m') && !(quantity('1') == quantity('2')) && ip('::1') == ip('0::1') && cidr('10.0.0.0/8') == cidr('10.0.0.0/8')`,
		`url('https://a/b') == url('https://a/b') && format.named('uuid').value() == format.uuid()`,
		// ip and cidr
		`ip('10.0.0.1').family() == 4 && ip('::1').family() == 6 && ip('::1').isLoopback()`,
		`ip('0.0.0.0').isUnspecified() && ip('fe80::1').isLinkLocalUnicast() && ip('ff02::1').isLinkLocalMulticast()`,
		`ip('8.8.8.8').isGlobalUnicast() && ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')`,
		`isIP('1.2.3.4') && !isIP('1.2.3') && !isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0')`,
		`cidr('10.0.0.0/8').containsIP('10.1.2.3') && cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))`,
		`cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.1.0.0/16').containsCIDR(cidr('10.0.0.0/8'))`,
		`string(cidr('10.1.2.3/8').masked()) == '10.0.0.0/8' && cidr('10.1.2.3/8').prefixLength() == 8`,
		`string(cidr('10.1.2.3/8').ip()) == '10.1.2.3' && string(cidr('10.0.0.0/8')) == '10.0.0.0/8' && string(ip('::1')) == '::1'`,
		`isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0')`,
		// format
		`!format.dns1123Label().validate('abc').hasValue() && format.dns1123Label().validate('ABC').hasValue()`,
		`format.named('dns1123Subdomain').value().validate('a.b').hasValue() == false`,
		`!format.named('nope').hasValue()`,
		`format.dns1123LabelPrefix().validate('abc-').hasValue() == false && format.dns1123Label().validate('abc-').hasValue()`,
		`format.uuid().validate('6f1b2b4e-1a2b-4c3d-8e9f-0a1b2c3d4e5f').hasValue() == false && format.uri().validate('x').hasValue()`,
		`format.labelValue().validate('a b').value().size() > 0`,
		`format.uri().validate('x').value() == ['parse "x": invalid URI for request'] && format.byte().validate('!').value() == ['invalid base64']`,
		`format.date().validate('2024-13-01').value() == ['invalid date'] && format.datetime().validate('2024-01-01').value() == ['invalid datetime']`,
		`!format.datetime().validate('2024-01-01t00:00:00z').hasValue() && !format.date().validate('2024-01-01').hasValue()`,
		`format.dns1123Label().validate('ABC').value()[0].startsWith('a lowercase RFC 1123 label must consist of')`,
		// two-variable comprehensions
		`self.m.all(k, v, k != v) && self.l.exists(i, v, i == 0 && v == 3)`,
		`self.l.transformList(i, v, v * i) == [0, 1, 4]`,
		`self.m.transformMap(k, v, v + k) == {'a': 'xa', 'b': 'yb'}`,
		// optionals
		`self.?opt.orValue('d') == 'd' && self.?s.hasValue() && optional.of(1).value() == 1`,
		`self.m[?'a'].value() == 'x' && !self.m[?'z'].hasValue()`,
		// types from formats, escaping, int-or-string
		`self.ts == timestamp('2024-01-02T03:04:05Z') && self.ts.getFullYear() == 2024`,
		`self.d == duration('90m') && self.b == b'hello'`,
		`type(self.ios) == string && self.ios.endsWith('%')`,
		`self.dash__dash__name == 'dn' && self.__namespace__ == 'ns' && self.a__dot__b == 'dot' && self.x__underscores__y == 'us'`,
		`self.metadata.name == 'w1' && self.metadata.generateName == 'w-' && self.kind == 'Widget' && self.apiVersion == 'example.com/v1'`,
		`has(self.obj.k) && !has(self.obj.z) && !has(self.opt)`,
		`self.set == ['y', 'x'] && self.set + ['z', 'x'] == ['x', 'y', 'z']`,
		`self.f > 1 && self.i < 3.5`,
	}
	for _, e := range exprs {
		t.Run(e, func(t *testing.T) {
			var sch map[string]any
			if err := json.Unmarshal([]byte(libSchema), &sch); err != nil {
				t.Fatal(err)
			}
			sch["x-kubernetes-validations"] = []any{map[string]any{"rule": e}}
			raw, _ := json.Marshal(sch)
			v, errs := Compile(mustSchema(t, string(raw)), "spec.validation.openAPIV3Schema")
			if errs != nil {
				t.Fatalf("compile: %v", joinErrs(errs))
			}
			if got := v.Validate(context.Background(), mustObj(t, libData), nil); got != nil {
				t.Errorf("got %v", joinErrs(got))
			}
		})
	}
}

// TestLibraryErrors checks runtime failures surface with upstream's
// wording.
func TestLibraryErrors(t *testing.T) {
	tests := []struct{ rule, want string }{
		{`[].min() == 0`, `<nil>: Invalid value: "object": min called on empty list evaluating rule: [].min() == 0`},
		{`url('x') != null`, `<nil>: Invalid value: "object": URL parse error during conversion from string: parse "x": invalid URI for request evaluating rule: url('x') != null`},
		{`quantity('1x').sign() == 1`, `<nil>: Invalid value: "object": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: quantity('1x').sign() == 1`},
		{`ip('::ffff:1.2.3.4').family() == 6`, `<nil>: Invalid value: "object": IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed evaluating rule: ip('::ffff:1.2.3.4').family() == 6`},
		{`cidr('10.0.0.0').prefixLength() == 8`, `<nil>: Invalid value: "object": network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("10.0.0.0"): no '/' evaluating rule: cidr('10.0.0.0').prefixLength() == 8`},
		{`quantity('1.5').asInteger() == 1`, `<nil>: Invalid value: "object": cannot convert value to integer evaluating rule: quantity('1.5').asInteger() == 1`},
		{`self.s.find(self.s) == ''`, ``},
		{`self.missing == 'x'`, `<nil>: Invalid value: "object": no such key: missing evaluating rule: self.missing == 'x'`},
		{`self.ios > 1`, `<nil>: Invalid value: "object": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: self.ios > 1`},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			s := `{"type":"object","x-kubernetes-validations":[{"rule":` + quoteJSON(tt.rule) + `}],"properties":{"s":{"type":"string","maxLength":8},"missing":{"type":"string","maxLength":8},"ios":{"x-kubernetes-int-or-string":true,"maxLength":8}}}`
			v, errs := Compile(mustSchema(t, s), "p")
			if errs != nil {
				t.Fatalf("compile: %v", joinErrs(errs))
			}
			got := joinErrs(v.Validate(context.Background(), mustObj(t, `{"s":"(","ios":"x"}`), nil))
			if tt.want == "" {
				if !strings.Contains(got, "Illegal regex") && !strings.Contains(got, "error parsing regexp") {
					t.Errorf("got %q, want a regex error", got)
				}
				return
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
