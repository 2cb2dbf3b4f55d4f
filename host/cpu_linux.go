//go:build linux

package host

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/pacer-load/pacer/internal/clock"
)

// ReadCPU samples the host's CPU time (/proc/stat) and this process's
// (getrusage RUSAGE_SELF), at the monotonic instant of the reading. Where
// /proc/stat cannot be read (a sandbox without /proc) the error wraps
// ErrUnavailable.
func ReadCPU() (CPUSample, error) {
	text, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUSample{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return CPUSample{}, fmt.Errorf("%w: getrusage: %w", ErrUnavailable, err)
	}
	at := clock.Now()
	t, cpus, err := parseStat(text)
	if err != nil {
		return CPUSample{}, err
	}
	return CPUSample{At: at, Host: t, CPUs: cpus, Self: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}, nil
}
