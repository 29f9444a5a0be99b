package printers

import (
	"strings"
	"testing"
)

func TestValidateColumn(t *testing.T) {
	const p = "spec.versions[0].additionalPrinterColumns[0]"
	for _, c := range []struct {
		name string
		col  Column
		want []string
	}{
		{"valid", Column{Name: "Ready", Type: "string", JSONPath: ".status.ready"}, nil},
		{"valid with format", Column{Name: "N", Type: "integer", Format: "int32", JSONPath: ".spec.n", Priority: 1}, nil},
		{"unparsable path is accepted", Column{Name: "N", Type: "string", JSONPath: ".spec[1"}, nil},
		{"root path", Column{Name: "N", Type: "string", JSONPath: "."}, nil},
		{"all missing", Column{}, []string{
			p + ".name: Required value",
			p + ".type: Required value: must be one of boolean,date,integer,number,string",
			p + ".JSONPath: Required value",
		}},
		{"bad type", Column{Name: "N", Type: "int", JSONPath: ".a"}, []string{
			p + `.type: Invalid value: "int": must be one of boolean,date,integer,number,string`,
		}},
		{"bad format", Column{Name: "N", Type: "string", Format: "uuid", JSONPath: ".a"}, []string{
			p + `.format: Invalid value: "uuid": must be one of byte,date,date-time,double,float,int32,int64,password`,
		}},
		{"path without dot", Column{Name: "N", Type: "string", JSONPath: "spec.a"}, []string{
			p + `.JSONPath: Invalid value: "spec.a": must be a simple json path starting with .`,
		}},
		{"path in brackets", Column{Name: "N", Type: "string", JSONPath: "[0]"}, []string{
			p + `.JSONPath: Invalid value: "[0]": must be a simple json path starting with .`,
		}},
	} {
		errs := ValidateColumn(c.col, p)
		var got []string
		for _, e := range errs {
			got = append(got, e.Error())
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: errors\n%s\nwant\n%s", c.name, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}
