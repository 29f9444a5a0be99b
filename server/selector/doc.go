// Package selector parses and evaluates the two selector languages of list
// and watch requests: label selectors (the labelSelector query parameter)
// and field selectors (the fieldSelector query parameter).
//
// Both parsers accept exactly the syntax the upstream API server accepts and
// report malformed input with the upstream error texts, so the REST layer can
// return them unchanged as the message of a 400 BadRequest Status. Parsed
// selectors are immutable values: they may be shared between goroutines and
// matched concurrently without locking, and matching never allocates.
//
// Which field names a resource supports is not decided here; the REST layer
// checks the requirements of a parsed Fields against its type and renders a
// rejection with UnknownFieldError.
package selector
