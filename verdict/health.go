package verdict

import (
	"fmt"
	"time"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// The trust rule's facts. Response time = send lag + service time, both
// measured from the intended time, so a late generator can only make
// latencies look worse and the load burstier. Assess reads a test for what
// the generator is answerable for; Judge decides from it.
//
// Lateness the target caused is not the generator's. From the moment no
// connection can take a due request (none open, or every FIFO full) until
// everything due is queued again, requests wait for the server: the pacer
// counts them (scheduler.Result.HeldSent, HeldUnsent). Assess leaves them
// out of the generator's send lag, taking them from the top of the lag
// distribution (where their wait puts them), and out of its sent share.

// MinSentFraction is the share of scheduled requests that must have been
// sent by the end of the timeline for the verdict to be ok.
const MinSentFraction = 0.995

const (
	// MaterialLag is the share of a latency from which the send lag is
	// material to it: a lag p99 under 10% of a response p99 (or of a
	// failing SLO value) cannot change the conclusion.
	MaterialLag = 0.10
	// MaxRateShortfall is how far the delivered rate may fall short of the
	// target before the load counts as under-delivered.
	MaxRateShortfall = 0.005
)

// Health is what a result says about the generator.
type Health struct {
	// Paced is set when there was a timeline to keep: an open run, or a
	// closed loop throttled to a rate.
	Paced bool
	// LagP99 is the send-lag p99 of the requests the generator is
	// answerable for: the sent ones less those the target held back.
	// RawLagP99 is over every sent request.
	LagP99, RawLagP99 time.Duration
	LagLimit          time.Duration
	// ResponseP99 is the test's response p99 (closed: from the send).
	ResponseP99 time.Duration
	// HeldBack counts the requests the target held back, sent or not;
	// HeldBackUnsent those of them never sent.
	HeldBack, HeldBackUnsent uint64
	// Blocked is how long the target held the timeline back.
	Blocked time.Duration
	// SentShare is sent / scheduled (1 when nothing was scheduled);
	// GeneratorSentShare leaves out the unsent requests the target held
	// back: sent / (scheduled − HeldBackUnsent).
	SentShare, GeneratorSentShare float64
	// Target is the timeline's rate (0: an unthrottled closed loop);
	// Delivered the rate at which requests were sent: the sent share of
	// the timeline's rate (open), or sent requests per second of sending
	// (throttled closed: Result.SendWindow, never the window that waits
	// for the last replies, or a load sent in full would look short).
	Target, Delivered float64
	// LagHigh: LagP99 above LagLimit. LagMaterial: also at least
	// MaterialLag of ResponseP99.
	LagHigh, LagMaterial bool
	// Behind: the generator's lateness is material (LagMaterial), or it
	// sent less than MinSentFraction of what it was answerable for.
	Behind bool
	// UnderDelivered: less than MinSentFraction of scheduled was sent, or
	// the delivered rate fell short of the target by more than
	// MaxRateShortfall, whoever caused it.
	UnderDelivered bool
}

// GeneratorUnsent is the number of unsent requests the generator is
// answerable for: those the target did not hold back.
func (h Health) GeneratorUnsent(c scheduler.Counts) uint64 {
	return c.Unsent - min(c.Unsent, h.HeldBackUnsent)
}

// Assess reads what a test says about the generator (pure: no clock,
// no I/O).
func Assess(t *report.Test) Health {
	f := t.MustFacts()
	h := Health{LagLimit: f.LagLimit, SentShare: 1, GeneratorSentShare: 1, Target: f.Target.PerSecond(), Blocked: f.Blocked}
	h.Paced = t.Mode == "open" || h.Target > 0
	c := t.Counts
	if f.Response != nil {
		h.ResponseP99 = time.Duration(f.Response.ValueAtQuantile(99))
	}
	h.HeldBackUnsent = min(f.HeldUnsent, c.Unsent)
	h.HeldBack = f.HeldSent + h.HeldBackUnsent
	if f.Lag != nil && f.Lag.TotalCount() > 0 {
		n := f.Lag.TotalCount()
		h.RawLagP99 = time.Duration(f.Lag.ValueAtQuantile(99))
		held := int64(min(f.HeldSent, uint64(n)))
		if held < n {
			h.LagP99 = time.Duration(f.Lag.ValueAtQuantile(99 * float64(n-held) / float64(n)))
		}
	}
	if c.Scheduled > 0 {
		h.SentShare = float64(c.Sent) / float64(c.Scheduled)
		if d := c.Scheduled - h.HeldBackUnsent; d > 0 {
			h.GeneratorSentShare = min(1, float64(c.Sent)/float64(d))
		}
	}
	switch {
	case h.Target <= 0:
	case t.Mode == "open":
		h.Delivered = h.SentShare * h.Target
	case f.SendWindow > 0:
		h.Delivered = float64(c.Sent) / f.SendWindow.Seconds()
	case f.Window > 0: // a test read back, which has no send window
		h.Delivered = float64(c.Sent) / f.Window.Seconds()
	}
	if !h.Paced {
		return h
	}
	h.LagHigh = h.LagLimit > 0 && h.LagP99 > h.LagLimit
	h.LagMaterial = h.LagHigh && float64(h.LagP99) >= MaterialLag*float64(h.ResponseP99)
	h.Behind = h.LagMaterial || c.Scheduled > 0 && h.GeneratorSentShare < MinSentFraction
	h.UnderDelivered = c.Scheduled > 0 && h.SentShare < MinSentFraction ||
		h.Target > 0 && h.Delivered < (1-MaxRateShortfall)*h.Target
	return h
}

// verdict is the verdict without an SLO: generator_behind when the
// generator's lateness is material to the response times or it sent too
// little of what it was answerable for; ok otherwise. Its reason is one
// sentence. (target_lost is decided before: see Judge.)
func (h Health) verdict() (string, string) {
	if !h.Paced {
		return report.VerdictOK, "closed loop: latency counts from the actual send"
	}
	held := h.HeldBackNote()
	switch {
	case h.GeneratorSentShare < MinSentFraction:
		return report.VerdictGeneratorBehind, fmt.Sprintf("only %.2f%% of scheduled requests were sent (below %.1f%%)%s",
			h.GeneratorSentShare*100, MinSentFraction*100, held)
	case h.LagMaterial:
		of := "above the response p99"
		if h.LagP99 < h.ResponseP99 {
			of = fmt.Sprintf("%.0f%% of the response p99", 100*float64(h.LagP99)/float64(h.ResponseP99))
		}
		return report.VerdictGeneratorBehind, fmt.Sprintf("send lag p99 %.3f ms is above %.3f ms and %s (%.3f ms)%s",
			dms(h.LagP99), dms(h.LagLimit), of, dms(h.ResponseP99), held)
	case h.LagHigh:
		return report.VerdictOK, fmt.Sprintf("send lag p99 %.3f ms is above %.3f ms but under %.0f%% of the response p99 (%.3f ms), so immaterial; %.2f%% of scheduled sent%s",
			dms(h.LagP99), dms(h.LagLimit), MaterialLag*100, dms(h.ResponseP99), h.SentShare*100, held)
	}
	return report.VerdictOK, fmt.Sprintf("send lag p99 %.3f ms ≤ %.3f ms, %.2f%% of scheduled sent%s",
		dms(h.LagP99), dms(h.LagLimit), h.SentShare*100, held)
}

// HeldBackNote is "" or a clause on how long the target held the timeline
// back, starting with "; ".
func (h Health) HeldBackNote() string {
	if h.HeldBack == 0 {
		return ""
	}
	return fmt.Sprintf("; the target held sends back for %.3f s (no connection open or every FIFO full), so the lateness of the %d requests due until the backlog cleared is the server's and left out",
		h.Blocked.Seconds(), h.HeldBack)
}
