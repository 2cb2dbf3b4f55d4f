package scheduler

import (
	"sync/atomic"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
)

// Commands yields what to send: the next command's encoded bytes (valid
// until the next call) and its kind. Implemented by scenarios.Stream.
type Commands interface {
	Next() (cmd []byte, kind uint32)
}

// CommandResult is one command's share of a mixed test: the same counts
// and histograms as the test's total, for the requests that sent it. The
// histograms are nil in a mix of more than MaxTimedCommands commands.
// Requests the generator never reached had no command chosen yet; they are
// unsent in the total only.
type CommandResult struct {
	Name                   string
	Counts                 Counts
	Response, Service, Lag *hdrhistogram.Histogram
	// Receive is the command's receive lag (see Result.Receive).
	Receive    *hdrhistogram.Histogram
	ErrorCodes map[string]uint64
	// Intervals is the command's own series (no bytes), when the test has
	// one and the mix is timed per command.
	Intervals []Interval
}

// CommandStats records one command of a mix. With a single command the
// per-command stats are the total's, so nothing is recorded twice. Its
// recorders are nil when the mix has more than MaxTimedCommands commands.
type CommandStats struct {
	Response, Service, Lag, Receive *histo.Recorder
	// Completed and Errors (replies) count as they happen, for the
	// command's interval series; CommandTally holds the exact tallies.
	Completed, Errors atomic.Uint64
}

// MaxTimedCommands is the largest mix whose commands get latency
// histograms of their own. A recorder costs about 270 KB (1 ns to 1 h at 3
// significant digits) and a command needs two or three, so a mix of 1000
// templates would hold most of a gigabyte; larger mixes keep per-command
// counts and error codes, and their latencies are in the test's total.
const MaxTimedCommands = 32

// CommandTally is a command's tally on one connection, owned by its reader
// (or worker) goroutine and read after it exits.
type CommandTally struct {
	Completed, Errors, Timeouts, Lost, Unsent uint64
	Recv                                      int64 // replies whose receive lag is pending (an open run's)
	Codes                                     map[string]uint64
}

// NoteError counts one error reply of code.
func (k *CommandTally) NoteError(code []byte) {
	if k.Codes == nil {
		k.Codes = map[string]uint64{}
	}
	AddCode(k.Codes, code, 1)
}

// Timed reports whether the commands of ks have latency recorders.
func Timed(ks []CommandStats) bool { return len(ks) > 0 && ks[0].Response != nil }

// NewCommandStats makes the per-command stats of a mix of the commands
// names (nil for one command), with a send-lag recorder each when withLag.
func NewCommandStats(names []string, withLag bool) []CommandStats {
	if len(names) <= 1 {
		return nil
	}
	ks := make([]CommandStats, len(names))
	if len(names) > MaxTimedCommands {
		return ks
	}
	for i := range ks {
		ks[i] = CommandStats{Response: histo.NewRecorder(), Service: histo.NewRecorder(), Receive: histo.NewRecorder()}
		if withLag {
			ks[i].Lag = histo.NewRecorder()
		}
	}
	return ks
}

// CommandResults sums per-connection tallies into per-command results.
func CommandResults(names []string, ks []CommandStats, tallies [][]CommandTally) []CommandResult {
	if len(ks) == 0 {
		return nil
	}
	out := make([]CommandResult, len(names))
	for i, name := range names {
		cr := CommandResult{Name: name, ErrorCodes: map[string]uint64{}}
		if ks[i].Response != nil {
			cr.Response, cr.Service, cr.Receive = ks[i].Response.Snapshot(), ks[i].Service.Snapshot(), ks[i].Receive.Snapshot()
		}
		if ks[i].Lag != nil {
			cr.Lag = ks[i].Lag.Snapshot()
		}
		for _, t := range tallies {
			if i >= len(t) {
				continue
			}
			k := t[i]
			cr.Counts.Completed += k.Completed
			cr.Counts.Errors += k.Errors + k.Lost
			cr.Counts.Timeouts += k.Timeouts
			cr.Counts.Unsent += k.Unsent
			for c, n := range k.Codes {
				cr.ErrorCodes[c] += n
			}
			if k.Lost > 0 {
				cr.ErrorCodes[CodeConnectionLost] += k.Lost
			}
		}
		cr.ErrorCodes = TrimCodes(cr.ErrorCodes)
		cr.Counts.Sent = cr.Counts.Completed + cr.Counts.Errors + cr.Counts.Timeouts
		cr.Counts.Scheduled = cr.Counts.Sent + cr.Counts.Unsent
		out[i] = cr
	}
	return out
}
