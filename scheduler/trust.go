package scheduler

import (
	"fmt"
	"time"

	"github.com/pacer-load/pacer/histo"
)

// The trust rule's facts. Response time = send lag + service time, both
// measured from the intended time, so a late generator can only make
// latencies look worse and the load burstier. Health reads a result for
// what the generator is answerable for; the verdict without an SLO
// (Health.Verdict) and report.Judge (with one) decide from it.
//
// Lateness the target caused is not the generator's. From the moment no
// connection can take a due request (none open, or every FIFO full) until
// everything due is queued again, requests wait for the server: the pacer
// counts them (Result.HeldSent, HeldUnsent). Health leaves them out of the
// generator's send lag, taking them from the top of the lag distribution
// (where their wait puts them), and out of its sent share.

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
	// Delivered the rate at which requests were sent: sent requests per
	// second of the timeline (open), or of the window (throttled closed).
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
func (h Health) GeneratorUnsent(c Counts) uint64 { return c.Unsent - min(c.Unsent, h.HeldBackUnsent) }

// Assess reads r (pure: no clock, no I/O).
func Assess(r *Result) Health {
	h := Health{LagLimit: r.LagLimit, SentShare: 1, GeneratorSentShare: 1, Target: r.TargetRate.PerSecond(), Blocked: r.Blocked}
	h.Paced = r.Mode == "open" || h.Target > 0
	c := r.Counts
	if r.Response != nil {
		h.ResponseP99 = time.Duration(r.Response.ValueAtQuantile(99))
	}
	h.HeldBackUnsent = min(r.HeldUnsent, c.Unsent)
	h.HeldBack = r.HeldSent + h.HeldBackUnsent
	if r.Lag != nil && r.Lag.TotalCount() > 0 {
		n := r.Lag.TotalCount()
		h.RawLagP99 = time.Duration(r.Lag.ValueAtQuantile(99))
		held := int64(min(r.HeldSent, uint64(n)))
		if held < n {
			h.LagP99 = time.Duration(r.Lag.ValueAtQuantile(99 * float64(n-held) / float64(n)))
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
	case r.Mode == "open":
		h.Delivered = h.SentShare * h.Target
	case r.Window > 0:
		h.Delivered = float64(c.Sent) / r.Window.Seconds()
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

// Verdict is the verdict without an SLO: generator_behind when the
// generator's lateness is material to the response times or it sent too
// little of what it was answerable for; ok otherwise. Its reason is one
// sentence. (target_lost is decided before: see targetLost.)
func (h Health) Verdict() (string, string) {
	if !h.Paced {
		return VerdictOK, "closed loop: latency counts from the actual send"
	}
	held := h.HeldBackNote()
	switch {
	case h.GeneratorSentShare < MinSentFraction:
		return VerdictGeneratorBehind, fmt.Sprintf("only %.2f%% of scheduled requests were sent (below %.1f%%)%s",
			h.GeneratorSentShare*100, MinSentFraction*100, held)
	case h.LagMaterial:
		of := "above the response p99"
		if h.LagP99 < h.ResponseP99 {
			of = fmt.Sprintf("%.0f%% of the response p99", 100*float64(h.LagP99)/float64(h.ResponseP99))
		}
		return VerdictGeneratorBehind, fmt.Sprintf("send lag p99 %.3f ms is above %.3f ms and %s (%.3f ms)%s",
			ms(h.LagP99), ms(h.LagLimit), of, ms(h.ResponseP99), held)
	case h.LagHigh:
		return VerdictOK, fmt.Sprintf("send lag p99 %.3f ms is above %.3f ms but under %.0f%% of the response p99 (%.3f ms), so immaterial; %.2f%% of scheduled sent%s",
			ms(h.LagP99), ms(h.LagLimit), MaterialLag*100, ms(h.ResponseP99), h.SentShare*100, held)
	}
	return VerdictOK, fmt.Sprintf("send lag p99 %.3f ms ≤ %.3f ms, %.2f%% of scheduled sent%s",
		ms(h.LagP99), ms(h.LagLimit), h.SentShare*100, held)
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

func ms(d time.Duration) float64 { return histo.Millis(int64(d)) }
