package merge

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
)

// This file merges the parts of a test that shards hold side by side: a
// cluster's nodes, the interval series, the server's side; and the sums
// they are made of, which refuse to wrap.

// sums adds counts and remembers the first that overflowed, so that a
// merge refuses counts that do not fit (a hostile or corrupt shard)
// instead of wrapping them.
type sums struct{ overflow string }

func (s *sums) add(dst *uint64, v uint64, what string) {
	r, carry := bits.Add64(*dst, v, 0)
	if carry != 0 && s.overflow == "" {
		s.overflow = what
	}
	*dst = r
}

func (s *sums) int(dst *int, v int, what string) {
	if v < 0 || *dst > math.MaxInt-v {
		if s.overflow == "" {
			s.overflow = what
		}
		return
	}
	*dst += v
}

func (s *sums) counts(dst *scheduler.Counts, c scheduler.Counts, what string) {
	s.add(&dst.Scheduled, c.Scheduled, what+": scheduled")
	s.add(&dst.Sent, c.Sent, what+": sent")
	s.add(&dst.Completed, c.Completed, what+": completed")
	s.add(&dst.Errors, c.Errors, what+": errors")
	s.add(&dst.Timeouts, c.Timeouts, what+": timeouts")
	s.add(&dst.Unsent, c.Unsent, what+": unsent")
}

func (s *sums) codes(dst, src map[string]uint64) {
	for k, v := range src {
		n := dst[k]
		s.add(&n, v, "errors "+strconv.Quote(k))
		dst[k] = n
	}
}

// err refuses the merge when a sum overflowed.
func (s *sums) err() error {
	if s.overflow == "" {
		return nil
	}
	return fmt.Errorf("%w: %s: the shards' sum overflows a 64-bit count", report.ErrMerge, s.overflow)
}

// mergeNodes adds the shards' per-node results (a Redis Cluster's
// primaries): a node of one shard is a node of another when their addr is
// the same and so is their id, where both have one. Counts, connections
// and redirects are summed and response histograms added; slots are as
// the first shard listing the node saw them at its start. A node only
// some shards list is kept with what they counted, in the order the
// shards list them. A node with a response summary but no histogram
// (written before nodes carried one) cannot be merged exactly: refused,
// an error wrapping ErrMerge. Nodes are found through an index by addr,
// so the merge takes time in proportion to the nodes.
func mergeNodes(parts []report.Test, in []Input) ([]report.Node, error) {
	var out []report.Node
	var hs [][3][]*hdrhistogram.Histogram // response, service, receive lag
	byAddr := map[string][]int{}          // indexes into out
	var sum sums
	for i, p := range parts {
		for _, n := range p.Nodes {
			if n.ResponseMs != nil && n.Histograms.Response == "" {
				return nil, fmt.Errorf("%w: %s: node %s has response times but no histogram (written by an older pacer): they cannot be merged exactly",
					report.ErrMerge, in[i].Label, strconv.Quote(n.Addr))
			}
			h, err := n.Decode()
			if err != nil {
				return nil, fmt.Errorf("%s: node %s: %w", in[i].Label, strconv.Quote(n.Addr), err)
			}
			k := -1
			for _, j := range byAddr[n.Addr] {
				if sameNode(out[j], n) {
					k = j
					break
				}
			}
			if k < 0 {
				out = append(out, report.Node{Addr: n.Addr, ID: n.ID, Slots: n.Slots, Role: n.Role})
				hs = append(hs, [3][]*hdrhistogram.Histogram{})
				k = len(out) - 1
				byAddr[n.Addr] = append(byAddr[n.Addr], k)
			}
			m := &out[k]
			if m.ID == "" {
				m.ID = n.ID
			}
			// A primary's own counts include every shard's clients: one
			// shard's reading is the node's, a sum would count it N times.
			if m.Server == nil {
				m.Server = n.Server
			}
			what := "node " + strconv.Quote(n.Addr)
			sum.int(&m.Connections, n.Connections, what+": connections")
			for _, f := range []struct {
				dst *uint64
				v   uint64
			}{{&m.Scheduled, n.Scheduled}, {&m.Sent, n.Sent}, {&m.Completed, n.Completed}, {&m.Errors, n.Errors},
				{&m.Timeouts, n.Timeouts}, {&m.Unsent, n.Unsent}, {&m.Redirects, n.Redirects}, {&m.Moved, n.Moved}, {&m.Ask, n.Ask}} {
				sum.add(f.dst, f.v, what)
			}
			for j := range h {
				hs[k][j] = append(hs[k][j], h[j])
			}
		}
	}
	if err := sum.err(); err != nil {
		return nil, err
	}
	for k := range out {
		var total [3]*hdrhistogram.Histogram
		for j := range total {
			var err error
			if total[j], err = report.AddHistograms(hs[k][j]); err != nil {
				return nil, fmt.Errorf("node %s: %w", strconv.Quote(out[k].Addr), err)
			}
		}
		n := &out[k]
		n.ResponseMs, n.ServiceMs, n.ReceiveLagMs = report.SummaryOf(total[0]), report.SummaryOf(total[1]), report.SummaryOf(total[2])
		for j, enc := range []*string{&n.Histograms.Response, &n.Histograms.Service, &n.Histograms.ReceiveLag} {
			var err error
			if *enc, err = histo.Encode(total[j]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// sameNode reports whether a and b are one primary: the same addr, and
// the same id where both have one.
func sameNode(a, b report.Node) bool {
	return a.Addr == b.Addr && (a.ID == "" || b.ID == "" || a.ID == b.ID)
}

// mergeIntervals merges the shards' interval series: intervals with the
// same start (on the shared timeline's clock) are added; the oldest
// request in flight is the oldest of any shard's. The intervals are
// independent: their histograms (most of the work, a few ms each) are
// added on every CPU.
func mergeIntervals(parts []report.Test, series func(report.Test) []report.Interval) ([]report.Interval, error) {
	byStart := map[float64][]report.Interval{}
	var starts []float64
	for _, p := range parts {
		for _, iv := range series(p) {
			if _, ok := byStart[iv.StartS]; !ok {
				starts = append(starts, iv.StartS)
			}
			byStart[iv.StartS] = append(byStart[iv.StartS], iv)
		}
	}
	if len(starts) == 0 {
		return nil, nil
	}
	sort.Float64s(starts)
	out := make([]report.Interval, len(starts))
	errs := make([]error, len(starts))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(starts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(starts) {
					return
				}
				out[i], errs[i] = mergeInterval(starts[i], byStart[starts[i]])
			}
		}()
	}
	wg.Wait()
	if err := firstError(errs); err != nil {
		return nil, err
	}
	return out, nil
}

// firstError is the first non-nil error of errs.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// mergeInterval adds the shards' intervals that start at s.
func mergeInterval(s float64, ivs []report.Interval) (report.Interval, error) {
	m := report.Interval{StartS: s}
	hs := make([]report.Histograms, 0, len(ivs))
	var sent, recv, inFlight uint64
	withBytes, withFlight := false, false
	var sum sums
	what := func(w string) string { return fmt.Sprintf("interval at %gs%s", s, w) }
	for _, iv := range ivs {
		m.DurationS = math.Max(m.DurationS, iv.DurationS)
		sum.counts(&m.Counts, iv.Counts, "")
		if iv.BytesSent != nil {
			sum.add(&sent, *iv.BytesSent, ": bytes")
			withBytes = true
		}
		if iv.BytesReceived != nil {
			sum.add(&recv, *iv.BytesReceived, ": bytes")
			withBytes = true
		}
		if iv.InFlight != nil {
			sum.add(&inFlight, *iv.InFlight, ": in flight")
			withFlight = true
		}
		m.OldestInflightMs = maxOf(m.OldestInflightMs, iv.OldestInflightMs)
		m.OldestInflightMaxMs = maxOf(m.OldestInflightMaxMs, iv.OldestInflightMaxMs)
		hs = append(hs, iv.Histograms)
	}
	if sum.overflow != "" {
		sum.overflow = what(sum.overflow)
		return m, sum.err()
	}
	m.Messages = mergeIntervalMessages(ivs)
	if withBytes {
		m.BytesSent, m.BytesReceived = &sent, &recv
	}
	if withFlight {
		m.InFlight = &inFlight
	}
	var err error
	if m.Latencies, err = report.MergeLatencies(hs); err != nil {
		return m, fmt.Errorf("%s: %w", what(""), err)
	}
	return m, nil
}

// maxOf is the larger of a and b, either absent (nil); a new pointer.
func maxOf(a, b *float64) *float64 {
	switch {
	case b == nil:
		return a
	case a == nil || *b > *a:
		v := *b
		return &v
	}
	return a
}

// target is a server the shards ran against and the shards (indexes into
// the inputs) that did.
type target struct {
	addr   string
	shards []int
}

// groupTargets groups the shards (in order) by the target they ran
// against: one group when they shared a server (sameConfig checked their
// target), one per shard when each ran its own (--embedded).
func groupTargets(in []Input) []target {
	var out []target
	index := map[string]int{}
	for i, s := range in {
		addr, _ := s.Doc.Config["target"].(string)
		key := addr
		if _, ok := s.Doc.Config["embedded"]; ok {
			addr, key = "embedded", strconv.Itoa(i)
		}
		k, ok := index[key]
		if !ok {
			k = len(out)
			index[key] = k
			out = append(out, target{addr: addr})
		}
		out[k].shards = append(out[k].shards, i)
	}
	return out
}

// mergeServers sets the merged test's server side from the shards': once
// for a shared target (each shard's reading counts every client, so a sum
// would count the load N times: the first shard's that has one), and once
// per target when they differ.
func mergeServers(t *report.Test, parts []report.Test, in []Input, targets []target) {
	for _, g := range targets {
		ts := report.TargetServer{Target: g.addr}
		for _, i := range g.shards {
			ts.Shards = append(ts.Shards, in[i].Doc.Shard.K)
			if ts.Server == nil && parts[i].Server != nil {
				ts.Server = parts[i].Server
			}
		}
		if ts.Server == nil {
			continue
		}
		if len(targets) == 1 {
			t.Server = ts.Server
			return
		}
		t.Servers = append(t.Servers, ts)
	}
}
