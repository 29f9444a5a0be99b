//go:build unix

package server

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// privateBits are the permission bits a private file or directory must
// not have: any access by group or others (as ssh requires of keys).
const privateBits fs.FileMode = 0o077

// writeBits are the group and others write bits: whoever has them can
// replace a key (or, on a directory, the files in it).
const writeBits fs.FileMode = 0o022

// openNoFollow makes an open fail on a symbolic link, so that a mode is
// repaired on the file that was checked and never on a link's target.
const openNoFollow = syscall.O_NOFOLLOW

// openToOthers reports whether mode lets group or others at the file.
func openToOthers(mode fs.FileMode) bool { return mode.Perm()&privateBits != 0 }

// ownedByUs reports whether the process's effective user owns fi; false
// where the owner is unknown.
func ownedByUs(fi fs.FileInfo) bool {
	uid, ok := ownerOf(fi)
	return ok && uid == os.Geteuid()
}

func ownerOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// operatorFileProblem says why a secret file the operator supplied, or the
// target of a link among platd's files, may not be used, and what to run
// (why is "" if it may). The rule is PostgreSQL's for its key file: owned
// by platd's user, nobody else may reach it; owned by root, others may not
// reach it and its group may only read (root:platd 0640, a Kubernetes
// Secret volume with fsGroup); any other owner is refused.
func operatorFileProblem(fi fs.FileInfo, path string) (why, fix string) {
	uid, ok := ownerOf(fi)
	if !ok {
		return "", ""
	}
	return ownerModeProblem(fi.Mode().Perm(), uid, os.Geteuid(), path)
}

// flagFileProblem is operatorFileProblem for a secret file a flag names,
// which is private too when only its group may read it and it lies in a
// directory of platd's user nobody else may enter (controller-runtime's
// envtest writes its keys 0640 into a 0700 directory).
func flagFileProblem(fi fs.FileInfo, path string) (why, fix string) {
	why, fix = operatorFileProblem(fi, path)
	if why == "" || fi.Mode().Perm()&0o037 != 0 || !ownedByUs(fi) {
		return why, fix
	}
	real, err := filepath.EvalSymlinks(path)
	if err == nil && closedDir(filepath.Dir(real)) {
		return "", ""
	}
	return why, fix
}

// closedDir reports whether dir is a directory of platd's user that
// group and others may not enter.
func closedDir(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir() && ownedByUs(fi) && fi.Mode().Perm()&privateBits == 0
}

func ownerModeProblem(perm fs.FileMode, owner, euid int, path string) (why, fix string) {
	switch {
	case owner == euid:
		if perm&privateBits != 0 {
			return "group or others may read or change it", "make it private to platd's user: chmod 600 " + path
		}
	case owner == 0:
		if perm&0o037 != 0 {
			return "it is owned by root and others may reach it or its group may do more than read it", "chmod 640 " + path + " (or 600)"
		}
	default:
		return "it is owned by neither platd's user nor root", "chown it to platd's user (then chmod 600) or to root (then chmod 640): " + path
	}
	return "", ""
}
