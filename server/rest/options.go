package rest

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"platd/server/apierr"
	"platd/server/registry"
)

// Option kinds, as named in query-parameter validation errors.
const (
	kindListOptions   = "ListOptions"
	kindCreateOptions = "CreateOptions"
	kindUpdateOptions = "UpdateOptions"
	kindPatchOptions  = "PatchOptions"
	kindDeleteOptions = "DeleteOptions"
)

// Field validation directives.
const (
	validationIgnore = "Ignore"
	validationWarn   = "Warn"
	validationStrict = "Strict"
)

// optionsInvalid is the 422 of bad query parameters on an option kind.
func (h *Handler) optionsInvalid(kind string, errs ...*apierr.FieldError) error {
	return apierr.NewInvalid(h.brand.MetaGroup(), kind, "", errs)
}

// writeOptions are the query parameters of create, update and patch.
type writeOptions struct {
	dryRun          bool
	fieldValidation string
	fieldManager    string
	// given are the options as the request gave them (dryRun,
	// fieldManager, fieldValidation), the members of the options object
	// admission sees; fieldValidation is not defaulted there.
	given map[string]any
}

func (h *Handler) parseWriteOptions(q url.Values, kind string) (writeOptions, error) {
	var o writeOptions
	var errs apierr.FieldErrors
	dry, err := parseDryRun(q)
	if err != nil {
		errs = append(errs, err)
	}
	o.dryRun = dry
	o.fieldValidation = q.Get("fieldValidation")
	switch o.fieldValidation {
	case "":
		o.fieldValidation = validationWarn
	case validationIgnore, validationWarn, validationStrict:
	default:
		errs = append(errs, apierr.NotSupported("fieldValidation", o.fieldValidation, []string{"", validationIgnore, validationStrict, validationWarn}))
	}
	o.fieldManager = q.Get("fieldManager")
	o.given = givenWriteOptions(q)
	if fe := validateFieldManager(o.fieldManager); fe != nil {
		errs = append(errs, fe)
	}
	if len(errs) > 0 {
		return o, h.optionsInvalid(kind, errs...)
	}
	return o, nil
}

// givenWriteOptions are the write options q gives, as the members of
// their options object.
func givenWriteOptions(q url.Values) map[string]any {
	given := map[string]any{}
	if v := q["dryRun"]; len(v) > 0 {
		given["dryRun"] = registry.AnyList(v)
	}
	for _, k := range []string{"fieldManager", "fieldValidation"} {
		if v := q.Get(k); v != "" {
			given[k] = v
		}
	}
	return given
}

// maxFieldManagerLength bounds the manager name, as upstream.
const maxFieldManagerLength = 128

func validateFieldManager(m string) *apierr.FieldError {
	if len(m) > maxFieldManagerLength {
		return apierr.TooLong("fieldManager", maxFieldManagerLength)
	}
	for i, r := range m {
		if !strconv.IsPrint(r) {
			return apierr.Invalid("fieldManager", m, fmt.Sprintf("invalid character %U (at position %d)", r, i))
		}
	}
	return nil
}

// parseDryRun accepts only dryRun=All, possibly repeated.
func parseDryRun(q url.Values) (bool, *apierr.FieldError) {
	vals, ok := q["dryRun"]
	if !ok {
		return false, nil
	}
	for _, v := range vals {
		if v != "All" {
			return false, &apierr.FieldError{Type: apierr.FieldNotSupported, Field: "dryRun", Value: vals, Detail: `supported values: "All"`}
		}
	}
	return len(vals) > 0, nil
}

// listOptions are the query parameters of list and watch.
type listOptions struct {
	labelSelector        string
	fieldSelector        string
	resourceVersion      string
	resourceVersionMatch string
	limit                int64
	continueToken        string
	timeoutSeconds       int64
	hasTimeout           bool
	allowWatchBookmarks  bool
	sendInitialEvents    *bool
	watch                bool
}

// Values of resourceVersionMatch.
const (
	matchNotOlderThan = "NotOlderThan"
	matchExact        = "Exact"
)

func (h *Handler) parseListOptions(q url.Values, watch bool) (*listOptions, error) {
	o := &listOptions{
		labelSelector:        q.Get("labelSelector"),
		fieldSelector:        q.Get("fieldSelector"),
		resourceVersion:      q.Get("resourceVersion"),
		resourceVersionMatch: q.Get("resourceVersionMatch"),
		continueToken:        q.Get("continue"),
		watch:                watch,
	}
	var err error
	if v := q.Get("limit"); v != "" {
		if o.limit, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, apierr.BadRequest(err.Error())
		}
	}
	if v := q.Get("timeoutSeconds"); v != "" {
		if o.timeoutSeconds, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, apierr.BadRequest(err.Error())
		}
		o.hasTimeout = true
	}
	o.allowWatchBookmarks, _ = queryBool(q, "allowWatchBookmarks")
	if b, ok := queryBool(q, "sendInitialEvents"); ok {
		o.sendInitialEvents = &b
	}
	return o, h.validateListOptions(o)
}

// validateListOptions applies the resourceVersionMatch and
// sendInitialEvents rules, reporting every broken one in upstream's order.
func (h *Handler) validateListOptions(o *listOptions) error {
	var errs apierr.FieldErrors
	match := o.resourceVersionMatch
	if o.watch {
		if o.sendInitialEvents != nil {
			if match != matchNotOlderThan {
				errs = append(errs, apierr.Forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
			}
			if h.noWatchList {
				errs = append(errs, apierr.Forbidden("sendInitialEvents", "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"))
			}
		}
		if match != "" {
			if o.sendInitialEvents == nil {
				errs = append(errs, apierr.Forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
			}
			if match != matchNotOlderThan {
				errs = append(errs, apierr.NotSupported("resourceVersionMatch", match, []string{matchNotOlderThan}))
			}
			if o.continueToken != "" {
				errs = append(errs, apierr.Forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
			}
		}
	} else {
		if match != "" {
			if o.resourceVersion == "" {
				errs = append(errs, apierr.Forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"))
			}
			if o.continueToken != "" {
				errs = append(errs, apierr.Forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
			}
			if match != matchExact && match != matchNotOlderThan {
				errs = append(errs, apierr.NotSupported("resourceVersionMatch", match, []string{matchExact, matchNotOlderThan, ""}))
			}
			if match == matchExact && o.resourceVersion == "0" {
				errs = append(errs, apierr.Forbidden("resourceVersionMatch", `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
			}
		}
		if o.sendInitialEvents != nil {
			errs = append(errs, apierr.Forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
		}
	}
	if len(errs) > 0 {
		return h.optionsInvalid(kindListOptions, errs...)
	}
	return nil
}

// queryBool reads a boolean query parameter as upstream does: present
// with any value but "0" or "false" (in any case), "" included, it is
// true; it is never an error.
func queryBool(q url.Values, key string) (value, present bool) {
	v, ok := q[key]
	if !ok || len(v) == 0 {
		return false, false
	}
	return v[0] != "0" && !strings.EqualFold(v[0], "false"), true
}

func splitTrim(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
