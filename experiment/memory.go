package experiment

import (
	"fmt"
	"strconv"

	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/internal/memlimit"
	"github.com/pacer-load/pacer/internal/usage"
)

// An open run's connections take memory as they need it, up to their caps:
// the output buffer up to --max-buffer (and the command that crosses it),
// the FIFO up to --max-inflight entries, the read buffer up to 64 KiB. A
// server that stops reading, or answers slowly, can fill every one of them.
// FitMemory compares that worst case with the memory limit the process runs
// under before anything is dialled, so a run the limit cannot hold ends with
// one line rather than with the Go runtime's "fatal error: out of memory"
// (which no Go program can catch, and which prints every goroutine).
//
// What it guarantees: the connections' buffers at their caps, plus
// memoryBase for everything else, fit in three quarters of the limit (the
// rest is the collector's headroom; the CLI also sets the runtime's soft
// memory limit). It does not cover the embedded target's own buffers, a
// cluster's joining primaries beyond -c per primary, or a kernel that
// refuses memory it promised (overcommit).
const (
	// connFixed is what a connection may hold besides its two caps: its
	// read buffer at its largest (64 KiB) and its reader's stack and state.
	connFixed = 80 << 10
	// connFloor is what a connection holds at the least: a page each of
	// FIFO, read buffer and output, its reader's stack and state.
	connFloor = 32 << 10
	// memoryBase is the rest of a run: histograms, series, the runtime.
	memoryBase = 128 << 20
	// addressReserve is the address space the Go runtime reserves up front
	// (about 1.9 GB measured on linux/amd64), which RLIMIT_AS counts.
	addressReserve = 2 << 30
	// minFittedBuffer and minFittedInflight are the lowest caps FitMemory
	// chooses in place of the defaults.
	minFittedBuffer   = 16 << 10
	minFittedInflight = 128
)

// MemoryFit is the outcome of FitMemory: the caps to run with and, when
// they were lowered, the note that says so (a usage.OptionError, for it
// names the caps; nil when they stand).
type MemoryFit struct {
	MaxBuffer, MaxInflight int
	Note                   error
}

// FitMemory checks that conns connections with the caps of l fit the
// limit lim (see above). Caps the user did not give (bufferSet,
// inflightSet false) are lowered to fit, no lower than minFittedBuffer
// (or the largest command, maxCommand) and minFittedInflight, with a note;
// caps the user gave are kept. When even then the worst case does not fit,
// the error says so in one line. A run without --max-inflight (l's
// MaxInflight 0) counts the FIFO at its default.
func FitMemory(conns int, l OpenLoad, bufferSet, inflightSet bool, maxCommand int, lim memlimit.Limit, defaultInflight int) (MemoryFit, error) {
	fit := MemoryFit{MaxBuffer: l.MaxBuffer, MaxInflight: l.MaxInflight}
	inflight := l.MaxInflight
	if inflight == 0 {
		inflight, inflightSet = defaultInflight, true // a cap the command does not let the user lower
	}
	if lim.Bytes <= 0 || conns <= 0 {
		return fit, nil
	}
	usable := lim.Bytes
	if lim.AddressSpace {
		usable -= addressReserve
	}
	budget := usable/4*3 - memoryBase
	n := int64(conns)
	if budget < n*connFloor {
		why := ""
		if lim.AddressSpace {
			why = ", after the about 2 GiB of address space the Go runtime reserves"
		}
		return fit, fmt.Errorf("%d connections need at least %s; %s of %s leaves room for %s%s: lower -c or raise the limit",
			conns, mb(n*connFloor+memoryBase), lim.Source, mb(lim.Bytes), mb(max(budget, 0)+memoryBase), why)
	}
	worst := func(buffer, inflight int) int64 {
		return n * (connFixed + int64(buffer) + int64(maxCommand) + int64(inflight)*(FIFOEntryBytes+1))
	}
	if worst(fit.MaxBuffer, inflight) <= budget {
		return fit, nil
	}
	caps := func() error {
		return usage.Option("", "{max-buffer} %s, {max-inflight} %d", bytesize.Format(int64(fit.MaxBuffer)), inflight)
	}
	asked := caps()
	// Per connection, what the two caps may take together.
	per := budget/n - connFixed - int64(maxCommand)
	floorBuffer := int64(max(minFittedBuffer, maxCommand))
	switch {
	case bufferSet && inflightSet:
	case inflightSet:
		fit.MaxBuffer = int(max(per-int64(inflight)*(FIFOEntryBytes+1), 0)) &^ 1023
	case bufferSet:
		inflight = int(max(per-int64(fit.MaxBuffer), 0) / (FIFOEntryBytes + 1))
	default: // half each
		fit.MaxBuffer = int(per/2) &^ 1023
		inflight = int(per / 2 / (FIFOEntryBytes + 1))
	}
	fit.MaxBuffer, inflight = min(fit.MaxBuffer, l.MaxBuffer), min(inflight, max(l.MaxInflight, defaultInflight))
	if int64(fit.MaxBuffer) < floorBuffer && !bufferSet || inflight < minFittedInflight && !inflightSet ||
		worst(fit.MaxBuffer, inflight) > budget {
		return MemoryFit{MaxBuffer: l.MaxBuffer, MaxInflight: l.MaxInflight}, usage.Option("",
			"%d connections at %v may hold %s; %s of %s leaves them %s: lower {c}, {max-buffer} or {max-inflight}, or raise the limit",
			conns, asked, mb(worst(l.MaxBuffer, max(l.MaxInflight, defaultInflight))), lim.Source, mb(lim.Bytes), mb(budget))
	}
	if l.MaxInflight != 0 {
		fit.MaxInflight = inflight
	}
	fit.Note = usage.Option("", "pacer: note: %s of %s holds %d connections at %v each, not %v (their worst case, %s, must fit three quarters of it); give both flags to choose",
		lim.Source, mb(lim.Bytes), conns, caps(), asked, mb(worst(fit.MaxBuffer, inflight)))
	return fit, nil
}

// mb formats a size in MB (or GB) for a message.
func mb(b int64) string {
	if b >= 10<<30 {
		return strconv.FormatInt(b>>30, 10) + " GiB"
	}
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', 0, 64) + " MiB"
}
