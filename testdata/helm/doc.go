// Package helm drives the unmodified Helm v3 SDK against a platd binary
// built from this repository. It is a module of its own so that the
// product never depends on Helm or its client libraries.
package helm
