// Package clients drives unmodified client-go and controller-runtime
// against a platd binary built from this repository. It is a module of its
// own so that the product never depends on the client libraries.
package clients
