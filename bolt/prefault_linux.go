package bolt

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), which the syscall
// package does not name.
const madvPopulateWrite = 23

var pageMask = uintptr(syscall.Getpagesize() - 1)

// prefault makes the pages of b resident in one call, as writing them
// would one fault at a time; their content is unchanged. b is about to be
// written, and lies inside a page-aligned allocation (the advice works on
// whole pages). A kernel without the advice leaves the pages to be
// faulted in.
func prefault(b []byte) {
	if len(b) == 0 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := p &^ pageMask
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, p-start+uintptr(len(b)), madvPopulateWrite)
}
