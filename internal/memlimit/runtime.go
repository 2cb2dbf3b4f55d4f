package memlimit

import (
	"os"
	"runtime/debug"
)

// Soft is the runtime's soft memory limit for a process under l: 90% of
// what it can use (for an address-space limit, what the runtime's own 2
// GiB of reserved address space leaves), 0 when there is no limit or
// nothing is left.
func (l Limit) Soft() int64 {
	usable := l.Bytes
	if l.AddressSpace {
		usable -= 2 << 30 // the runtime's reserved address space
	}
	if usable <= 0 {
		return 0
	}
	return usable / 10 * 9
}

// SetRuntime sets the runtime's soft memory limit to Find's Soft, when
// there is one and GOMEMLIMIT is not set: near the limit the collector
// runs more often rather than let the heap's headroom take the process
// past it. It prevents nothing a run truly needs; the caller bounds that.
func SetRuntime() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if soft := Find().Soft(); soft > 0 {
		debug.SetMemoryLimit(soft)
	}
}
