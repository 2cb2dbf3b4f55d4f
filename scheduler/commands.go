package scheduler

import (
	"sync/atomic"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
)

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

// kindStats records one command of a mix. With a single command the
// per-command stats are the total's, so nothing is recorded twice. Its
// recorders are nil when the mix has more than MaxTimedCommands commands.
type kindStats struct {
	response, service, lag, receive *histo.Recorder
	// completed and errors (replies) count as they happen, for the
	// command's interval series; kindCount holds the exact tallies.
	completed, errors atomic.Uint64
}

// MaxTimedCommands is the largest mix whose commands get latency
// histograms of their own. A recorder costs about 270 KB (1 ns to 1 h at 3
// significant digits) and a command needs two or three, so a mix of 1000
// templates would hold most of a gigabyte; larger mixes keep per-command
// counts and error codes, and their latencies are in the test's total.
const MaxTimedCommands = 32

// kindCount is a command's tally on one connection, owned by its reader
// (or worker) goroutine and read after it exits.
type kindCount struct {
	completed, errors, timeouts, lost, unsent uint64
	recv                                      int64 // replies whose receive lag is pending (replies.recv)
	codes                                     map[string]uint64
}

func (k *kindCount) noteError(code []byte) {
	if k.codes == nil {
		k.codes = map[string]uint64{}
	}
	addCode(k.codes, code, 1)
}

// timed reports whether the commands of ks have latency recorders.
func timed(ks []kindStats) bool { return len(ks) > 0 && ks[0].response != nil }

func newKindStats(names []string, withLag bool) []kindStats {
	if len(names) <= 1 {
		return nil
	}
	ks := make([]kindStats, len(names))
	if len(names) > MaxTimedCommands {
		return ks
	}
	for i := range ks {
		ks[i] = kindStats{response: histo.NewRecorder(), service: histo.NewRecorder(), receive: histo.NewRecorder()}
		if withLag {
			ks[i].lag = histo.NewRecorder()
		}
	}
	return ks
}

// commandResults sums per-connection tallies into per-command results.
func commandResults(names []string, ks []kindStats, tallies [][]kindCount) []CommandResult {
	if len(ks) == 0 {
		return nil
	}
	out := make([]CommandResult, len(names))
	for i, name := range names {
		cr := CommandResult{Name: name, ErrorCodes: map[string]uint64{}}
		if ks[i].response != nil {
			cr.Response, cr.Service, cr.Receive = ks[i].response.Snapshot(), ks[i].service.Snapshot(), ks[i].receive.Snapshot()
		}
		if ks[i].lag != nil {
			cr.Lag = ks[i].lag.Snapshot()
		}
		for _, t := range tallies {
			if i >= len(t) {
				continue
			}
			k := t[i]
			cr.Counts.Completed += k.completed
			cr.Counts.Errors += k.errors + k.lost
			cr.Counts.Timeouts += k.timeouts
			cr.Counts.Unsent += k.unsent
			for c, n := range k.codes {
				cr.ErrorCodes[c] += n
			}
			if k.lost > 0 {
				cr.ErrorCodes[CodeConnectionLost] += k.lost
			}
		}
		cr.ErrorCodes = trimCodes(cr.ErrorCodes)
		cr.Counts.Sent = cr.Counts.Completed + cr.Counts.Errors + cr.Counts.Timeouts
		cr.Counts.Scheduled = cr.Counts.Sent + cr.Counts.Unsent
		out[i] = cr
	}
	return out
}
