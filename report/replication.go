package report

import (
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/visibility"
)

// Visibility is what the replication probes measured beside a test
// (--visibility): probes written on the primary at their intended
// instants, and each replica's visibility lag (a probe's first sighting
// there less its intended instant).
type Visibility struct {
	Rate        float64 `json:"rate"`
	Probes      uint64  `json:"probes"`
	WriteErrors uint64  `json:"write_errors"`
	// WriteMs is the probe writes' response time from their intended
	// instants; WriteHistogram its histogram (as the test's).
	WriteMs        *histo.Summary      `json:"write_ms"`
	WriteHistogram string              `json:"write_histogram"`
	Replicas       []VisibilityReplica `json:"replicas"`
}

// VisibilityReplica is one replica's visibility lag: the probes seen
// there and lost (not seen within 5 s), the polls it answered, the lag's
// summary (visibility_ms) and histogram, and per interval of the test.
type VisibilityReplica struct {
	Addr         string         `json:"addr"`
	Seen         uint64         `json:"seen"`
	Lost         uint64         `json:"lost"`
	Polls        uint64         `json:"polls"`
	VisibilityMs *histo.Summary `json:"visibility_ms"`
	Histogram    string         `json:"histogram"`
	// Intervals are the lags seen in each interval of the test:
	// start_s, duration_s, visibility_ms and histogram.
	Intervals []VisibilityInterval `json:"intervals,omitempty"`
	LastError string               `json:"last_error,omitempty"`
}

// VisibilityInterval is one interval of a replica's lags.
type VisibilityInterval struct {
	StartS       float64        `json:"start_s"`
	DurationS    float64        `json:"duration_s"`
	VisibilityMs *histo.Summary `json:"visibility_ms"`
	Histogram    string         `json:"histogram"`
}

// WaitJSON is what the WAITs after writes measured (--wait): how many
// were sent, acknowledged by enough replicas in time (acked), answered
// with fewer (short: the timeout ran out), error replies, lost (their
// connection died, or the run ended first), writes that got none
// (skipped: their connection had no room), and the latency from each
// write's intended time to its WAIT's reply.
type WaitJSON struct {
	Replicas  int            `json:"replicas"`
	TimeoutMs float64        `json:"timeout_ms"`
	Sent      uint64         `json:"sent"`
	Acked     uint64         `json:"acked"`
	Short     uint64         `json:"short"`
	Errors    uint64         `json:"errors"`
	Lost      uint64         `json:"lost"`
	Skipped   uint64         `json:"skipped"`
	LatencyMs *histo.Summary `json:"latency_ms"`
	Histogram string         `json:"histogram"`
}

// visibilityJSON converts the probes' result.
func visibilityJSON(v *visibility.Result) (*Visibility, error) {
	if v == nil {
		return nil, nil
	}
	out := &Visibility{Rate: v.Rate, Probes: v.Probes, WriteErrors: v.WriteErrors, WriteMs: summary(v.Write), Replicas: []VisibilityReplica{}}
	var err error
	if out.WriteHistogram, err = histo.Encode(v.Write); err != nil {
		return nil, err
	}
	for _, r := range v.Replicas {
		j := VisibilityReplica{Addr: r.Addr, Seen: r.Seen, Lost: r.Lost, Polls: r.Polls, VisibilityMs: summary(r.Lag), LastError: r.LastError}
		if j.Histogram, err = histo.Encode(r.Lag); err != nil {
			return nil, err
		}
		for _, iv := range r.Intervals {
			vi := VisibilityInterval{StartS: Round(iv.Start.Seconds(), 6), DurationS: Round(iv.Duration.Seconds(), 6), VisibilityMs: packedSummary(iv.Lag)}
			if vi.Histogram, err = iv.Lag.Text(); err != nil {
				return nil, err
			}
			j.Intervals = append(j.Intervals, vi)
		}
		out.Replicas = append(out.Replicas, j)
	}
	return out, nil
}

// waitJSON converts the WAITs' result.
func waitJSON(w *scheduler.WaitResult) (*WaitJSON, error) {
	if w == nil {
		return nil, nil
	}
	out := &WaitJSON{Replicas: w.Replicas, TimeoutMs: histo.Millis(int64(w.Timeout)), Sent: w.Sent, Acked: w.Acked, Short: w.Short,
		Errors: w.Errors, Lost: w.Lost, Skipped: w.Skipped, LatencyMs: summary(w.Latency)}
	var err error
	out.Histogram, err = histo.Encode(w.Latency)
	return out, err
}
