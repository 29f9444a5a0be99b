package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// protoField is one row of the protobuf field tables, joined with its
// emission row.
type protoField struct {
	Name     string // proto field name
	Number   int
	Type     string // scalar, qualified message, or map<K,V>
	Label    string // optional, repeated, map
	JSONName string // member name, "(inline)" or "-"
	Emit     string // always, nonnil, nonempty, custom
	GoType   string
}

// protoTables maps a fully qualified message name to its fields in
// ascending field-number order.
type protoTables map[string][]protoField

func readTSV(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		line := sc.Text()
		if line == "" {
			continue
		}
		rows = append(rows, strings.Split(line, "\t"))
	}
	return rows, sc.Err()
}

func readProto(dir string) (protoTables, error) {
	main, err := readTSV(filepath.Join(dir, "protobuf-fields.tsv"))
	if err != nil {
		return nil, err
	}
	emit, err := readTSV(filepath.Join(dir, "protobuf-fields-emit.tsv"))
	if err != nil {
		return nil, err
	}
	if len(main) != len(emit) {
		return nil, fmt.Errorf("protobuf tables differ in length: %d and %d rows", len(main), len(emit))
	}
	t := protoTables{}
	for i, r := range main {
		e := emit[i]
		if len(r) < 7 || len(e) < 7 {
			return nil, fmt.Errorf("protobuf table row %d is short", i+2)
		}
		if r[0] != e[0] || r[1] != e[1] || r[3] != e[3] {
			return nil, fmt.Errorf("protobuf tables disagree at row %d", i+2)
		}
		num, err := strconv.Atoi(r[3])
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i+2, err)
		}
		msg := r[0] + "." + r[1]
		t[msg] = append(t[msg], protoField{
			Name: r[2], Number: num, Type: r[4], Label: r[5], JSONName: r[6],
			Emit: e[4], GoType: e[6],
		})
	}
	return t, nil
}
