package host

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrUnavailable is returned by ReadCPU where the host's CPU time cannot be
// read (not Linux, or no /proc): callers report the CPU as unavailable.
var ErrUnavailable = errors.New("host CPU time unavailable")

// Ticks are the host's CPU time by state, summed over all CPUs, in the
// kernel's clock ticks (USER_HZ), as /proc/stat's aggregate "cpu" line has
// them. Guest time is already part of User and Nice, so it is not kept.
type Ticks struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Total is the sum of every state.
func (t Ticks) Total() uint64 {
	return t.User + t.Nice + t.System + t.Idle + t.IOWait + t.IRQ + t.SoftIRQ + t.Steal
}

// CPUSample is one reading of the host's and this process's CPU time.
type CPUSample struct {
	// At is the monotonic instant of the reading (internal/clock.Now).
	At int64
	// Host is the aggregate of all CPUs; CPUs is how many the kernel
	// lists (online CPUs).
	Host Ticks
	CPUs int
	// Self is this process's user plus system CPU time.
	Self time.Duration
}

// CPU is what the host's and the process's CPUs did between two samples.
type CPU struct {
	// Available is false when either sample is missing (the zero
	// CPUSample): the other fields are then zero.
	Available bool
	// Seconds is the wall time between the samples.
	Seconds float64
	// HostBusy is the share of all CPUs' time not idle (nor waiting for
	// I/O), 0..1: this process's, other processes', the kernel's, and time
	// the hypervisor gave to other guests (steal), which HostSteal alone
	// is.
	HostBusy, HostSteal float64
	// Self is this process's CPU time per wall second, in cores (1.5: one
	// and a half CPUs busy on average).
	Self float64
	// CPUs is the host's CPU count at the later sample.
	CPUs int
}

// Usage returns what the CPUs did from sample a to the later sample b.
// Counters that went backwards (a kernel quirk of iowait, or a CPU taken
// offline) count as zero.
func Usage(a, b CPUSample) CPU {
	if a.At == 0 || b.At == 0 || b.At <= a.At {
		return CPU{}
	}
	d := Ticks{
		User: delta(a.Host.User, b.Host.User), Nice: delta(a.Host.Nice, b.Host.Nice),
		System: delta(a.Host.System, b.Host.System), Idle: delta(a.Host.Idle, b.Host.Idle),
		IOWait: delta(a.Host.IOWait, b.Host.IOWait), IRQ: delta(a.Host.IRQ, b.Host.IRQ),
		SoftIRQ: delta(a.Host.SoftIRQ, b.Host.SoftIRQ), Steal: delta(a.Host.Steal, b.Host.Steal),
	}
	c := CPU{Available: true, Seconds: float64(b.At-a.At) / 1e9, CPUs: b.CPUs}
	if total := d.Total(); total > 0 {
		c.HostBusy = float64(total-d.Idle-d.IOWait) / float64(total)
		c.HostSteal = float64(d.Steal) / float64(total)
	}
	c.Self = max(b.Self-a.Self, 0).Seconds() / c.Seconds
	return c
}

func delta(a, b uint64) uint64 {
	if b < a {
		return 0
	}
	return b - a
}

// parseStat reads the aggregate "cpu" line of /proc/stat's text and counts
// its per-CPU lines ("cpu0", "cpu1", …). Kernels before 2.6.11 have fewer
// fields: the missing ones are zero.
func parseStat(text []byte) (Ticks, int, error) {
	var t Ticks
	found, cpus := false, 0
	for line := range bytes.Lines(text) {
		f := bytes.Fields(line)
		if len(f) == 0 || !bytes.HasPrefix(f[0], []byte("cpu")) {
			continue
		}
		if len(f[0]) > 3 {
			if _, err := strconv.Atoi(string(f[0][3:])); err == nil {
				cpus++
			}
			continue
		}
		if found {
			return Ticks{}, 0, errors.New("/proc/stat: two aggregate cpu lines")
		}
		found = true
		dst := []*uint64{&t.User, &t.Nice, &t.System, &t.Idle, &t.IOWait, &t.IRQ, &t.SoftIRQ, &t.Steal}
		if len(f)-1 < 4 {
			return Ticks{}, 0, fmt.Errorf("/proc/stat: short cpu line %q", bytes.TrimSpace(line))
		}
		for i, v := range f[1:min(len(f), len(dst)+1)] {
			n, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return Ticks{}, 0, fmt.Errorf("/proc/stat: cpu line field %d: %q", i+1, v)
			}
			*dst[i] = n
		}
	}
	if !found {
		return Ticks{}, 0, errors.New("/proc/stat: no aggregate cpu line")
	}
	return t, cpus, nil
}
