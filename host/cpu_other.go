//go:build !linux

package host

// ReadCPU returns ErrUnavailable: the host's CPU time is read from Linux's
// /proc/stat only.
func ReadCPU() (CPUSample, error) { return CPUSample{}, ErrUnavailable }
