package bolt

import "syscall"

// dropPages tells the kernel the mapped range [addr, addr+n) is not needed:
// for a shared file mapping the pages leave the resident set and are read
// back from the page cache on the next access.
func dropPages(addr, n uintptr) error {
	if n == 0 {
		return nil
	}
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, addr, n, syscall.MADV_DONTNEED); e != 0 {
		return e
	}
	return nil
}
