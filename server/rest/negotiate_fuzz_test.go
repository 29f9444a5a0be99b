package rest

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
)

// FuzzNegotiate feeds arbitrary Accept headers and query strings to the
// response negotiation: it picks a usable output or answers 406, and
// never panics.
func FuzzNegotiate(f *testing.F) {
	br, _ := config.LookupBrand("plat")
	h := New(Config{Registry: registry.New(), Brand: br})
	meta := br.MetaGroup()
	for _, seed := range []string{
		"",
		"application/json",
		"application/json;as=Table;v=v1;g=" + meta,
		"application/json;as=Table;v=v1beta1;g=" + meta + ", application/json",
		"application/json;as=PartialObjectMetadataList;v=v1;g=" + meta,
		br.ProtobufMediaType + ";as=PartialObjectMetadata;v=v1beta1;g=" + meta,
		br.ProtobufMediaType + ";as=Table;v=v1;g=" + meta,
		"application/json;as=Unknown;v=v1;g=" + meta,
		"application/yaml;q=0.5, */*;q=0.1",
		"application/json;stream=watch",
		"text/html, application/xhtml+xml;q=0.9",
		`application/json;as="Table";v=v1;g=` + meta + `;includeObject=None`,
		";;;,,,=",
	} {
		f.Add(seed, "includeObject=Metadata&pretty=1")
	}
	f.Fuzz(func(t *testing.T, accept, query string) {
		q, err := url.ParseQuery(query)
		if err != nil {
			q = url.Values{}
		}
		for _, watch := range []bool{false, true} {
			r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps?"+q.Encode(), nil)
			r.Header.Set("Accept", accept)
			out, err := h.negotiate(r, watch)
			if err != nil {
				if code := apierr.Code(err); code != http.StatusNotAcceptable {
					t.Fatalf("Accept %q: error %v with code %d, want 406", accept, err, code)
				}
				continue
			}
			if out.format == formatProtobuf && out.as == asTable {
				t.Fatalf("Accept %q: a protobuf Table, which is never produced", accept)
			}
			if out.as != asObject && out.asVersion != metaV1 && out.asVersion != metaV1beta1 {
				t.Fatalf("Accept %q: conversion to %v in version %q", accept, out.as, out.asVersion)
			}
		}
	})
}
