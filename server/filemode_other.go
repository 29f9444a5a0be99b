//go:build !unix

package server

import "io/fs"

// Where permission bits do not say who may read a file (Windows uses
// ACLs, which platd does not inspect), nothing is open to others and
// nothing is repaired.
const (
	privateBits  fs.FileMode = 0
	writeBits    fs.FileMode = 0
	openNoFollow             = 0
)

func openToOthers(fs.FileMode) bool { return false }

func ownedByUs(fs.FileInfo) bool { return false }

func operatorFileProblem(fs.FileInfo, string) (why, fix string) { return "", "" }

func flagFileProblem(fs.FileInfo, string) (why, fix string) { return "", "" }
