// Command rxspread measures what reading several replies at once does to
// their arrival. A read that completes k replies gives all k the kernel
// receive timestamp of the last segment it consumed: for the earlier ones
// an upper bound, late by as much as the server wrote them apart. It
// drives conn.Conn connections at a uniform open-model rate against the
// timestamping sink (internal/sink, in this process), matches every reply
// to the sink's record of it, and reports:
//
//   - replies per read (the reads are told apart by their read instant);
//
//   - spread: the sink's write instants of the first and last reply of one
//     read, apart (0 for a read of one reply, or of one write);
//
//   - sink write → arrival: how late the arrival pacer takes is, per
//     reply, after the sink began writing it (the kernel's own transit,
//     plus the spread for the earlier replies of a read);
//
//   - sink write → read: the same for the read instant, what pacer took
//     before kernel timestamps.
//
//     go run ./bench/rxspread -rates 100k,1M -c 50 -duration 1s -runs 3
//
// The sink, the pacing loop and the 50 reader goroutines share the
// machine's cores: at 1M/s a 2-core machine falls behind, and the achieved
// rate is printed. Numbers from a shared machine are provisional.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/bench/internal/kit"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/clock"
	"github.com/pacer-load/pacer/internal/sink"
)

func main() {
	rates := flag.String("rates", "100k,1M", "request rates per second (k and M suffixes)")
	conns := flag.Int("c", 50, "connections")
	duration := flag.Duration("duration", time.Second, "duration of each run")
	runs := flag.Int("runs", 1, "runs per rate, interleaved")
	flag.Parse()
	var points []int
	for _, s := range strings.Split(*rates, ",") {
		r, err := parseRate(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		points = append(points, r)
	}
	results := make(map[int][]result)
	for run := range *runs {
		for _, rate := range points {
			res, err := measure(rate, *conns, *duration)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Printf("run %d rate %d/s: %s\n", run+1, rate, res)
			results[rate] = append(results[rate], res)
		}
	}
	if *runs > 1 {
		for _, rate := range points {
			rs := results[rate]
			med := func(f func(result) float64) float64 { return kit.Median(rs, f) }
			fmt.Printf("median rate %d/s: achieved %.0f/s, replies/read mean %.2f, in shared reads %.1f%%, spread p50 %.1fµs p99 %.1fµs p99.9 %.1fµs, write→arrival p50 %.1fµs p99 %.1fµs p99.9 %.1fµs, write→read p50 %.1fµs p99 %.1fµs p99.9 %.1fµs\n",
				rate, med(func(r result) float64 { return r.achieved }), med(func(r result) float64 { return r.perRead }),
				med(func(r result) float64 { return r.shared * 100 }),
				med(func(r result) float64 { return us(r.spread.p50) }), med(func(r result) float64 { return us(r.spread.p99) }), med(func(r result) float64 { return us(r.spread.p999) }),
				med(func(r result) float64 { return us(r.arrival.p50) }), med(func(r result) float64 { return us(r.arrival.p99) }), med(func(r result) float64 { return us(r.arrival.p999) }),
				med(func(r result) float64 { return us(r.read.p50) }), med(func(r result) float64 { return us(r.read.p99) }), med(func(r result) float64 { return us(r.read.p999) }))
		}
	}
}

func parseRate(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1000, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mult, s = 1000000, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad rate %q", s)
	}
	return n * mult, nil
}

func us(ns int64) float64 { return float64(ns) / 1e3 }

type quantiles struct{ p50, p99, p999, max int64 }

func quantilesOf(v []int64) quantiles {
	if len(v) == 0 {
		return quantiles{}
	}
	slices.Sort(v)
	at := func(p float64) int64 { return v[int(p*float64(len(v)-1))] }
	return quantiles{at(.5), at(.99), at(.999), v[len(v)-1]}
}

func (q quantiles) String() string {
	return fmt.Sprintf("p50 %.1fµs p99 %.1fµs p99.9 %.1fµs max %.1fµs", us(q.p50), us(q.p99), us(q.p999), us(q.max))
}

type result struct {
	achieved       float64
	replies, reads int
	perRead        float64 // mean replies per read
	shared         float64 // share of replies that came in a read of several
	maxPerRead     int
	spread         quantiles // over the reads of several replies
	arrival, read  quantiles // per reply, from the sink's write
	firstOfShared  quantiles // sink write → arrival, first reply of a shared read
	receiveLag     quantiles // read − arrival
	receiveClock   string
	unmatched, cut int
}

func (r result) String() string {
	return fmt.Sprintf("achieved %.0f/s, %d replies in %d reads (%.2f per read, max %d; %.1f%% in reads of several), receive clock %s\n"+
		"  spread of a shared read:           %s\n"+
		"  sink write → arrival:              %s\n"+
		"  sink write → arrival, first of shared read: %s\n"+
		"  sink write → read:                 %s\n"+
		"  receive lag (read − arrival):      %s",
		r.achieved, r.replies, r.reads, r.perRead, r.maxPerRead, r.shared*100, r.receiveClock,
		r.spread, r.arrival, r.firstOfShared, r.read, r.receiveLag)
}

// reply is what a connection's handler keeps of one reply.
type reply struct{ arrival, read int64 }

// recorder keeps every reply of one connection; its slice is sized up
// front, so the run does not allocate in the handler.
type recorder struct {
	got []reply
	n   atomic.Int64
}

func (r *recorder) Reply(_ *conn.Entry, _ conn.Reply, t conn.Times) {
	r.got = append(r.got, reply{t.Arrival, t.Read})
	r.n.Add(1)
}

func measure(rate, nconns int, duration time.Duration) (result, error) {
	n := int(int64(rate) * int64(duration) / int64(time.Second))
	s, err := sink.Start(sink.Options{MaxRecords: n + nconns})
	if err != nil {
		return result{}, err
	}
	defer s.Close()
	cs := make([]*conn.Conn, nconns)
	hs := make([]*recorder, nconns)
	for k := range cs {
		// One at a time, each answering its probe before the next dials:
		// the sink numbers them in this order.
		c, err := conn.Dial(context.Background(), conn.Options{Addr: s.Addr()})
		if err != nil {
			return result{}, err
		}
		defer c.Close()
		hs[k] = &recorder{got: make([]reply, 0, n/nconns+1)}
		c.Start(hs[k])
		cs[k] = c
	}
	cmd := conn.AppendCommand(nil, "PING")
	period := float64(time.Second) / float64(rate)
	t0 := clock.Now() + int64(time.Millisecond)
	intended := func(i int) int64 { return t0 + int64(float64(i)*period) }
	dirty := make([]bool, nconns)
	for i := 0; i < n; {
		now := clock.Now()
		for ; i < n && intended(i) <= now; i++ {
			c := cs[i%nconns]
			if c.Free() == 0 {
				break // the sink is behind: send the rest at the next wake
			}
			c.Queue(cmd, intended(i), 0)
			dirty[i%nconns] = true
		}
		for k, d := range dirty {
			if d {
				if err := cs[k].Flush(clock.Now()); err != nil {
					return result{}, err
				}
				dirty[k] = false
			}
		}
		if i < n {
			if next := intended(i); next > clock.Now() {
				clock.SleepUntil(next)
			}
		}
	}
	sent := clock.Now() - t0
	for k, c := range cs {
		for c.Pending() {
			if err := c.FlushBlocking(clock.Now()); err != nil {
				return result{}, err
			}
		}
		want := int64(n / nconns)
		if k < n%nconns {
			want++
		}
		for deadline := time.Now().Add(30 * time.Second); hs[k].n.Load() < want; {
			if time.Now().After(deadline) {
				return result{}, fmt.Errorf("connection %d: %d of %d replies", k, hs[k].n.Load(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	res := result{achieved: float64(n) / (float64(sent) / 1e9), receiveClock: cs[0].ReceiveClock()}
	for _, c := range cs {
		c.Close()
	}
	// The sink records a command just after its reply's write.
	recs := s.Records()
	for deadline := time.Now().Add(10 * time.Second); len(recs) < n+nconns && time.Now().Before(deadline); recs = s.Records() {
		time.Sleep(time.Millisecond)
	}
	byConn := make([][]sink.Record, nconns)
	for _, r := range recs {
		if r.Conn < nconns {
			byConn[r.Conn] = append(byConn[r.Conn], r)
		}
	}
	var spread, arrival, read, first, lag []int64
	for k, h := range hs {
		recs := byConn[k]
		if len(recs) != len(h.got)+1 {
			return result{}, fmt.Errorf("connection %d: %d replies, the sink recorded %d commands (with the probe)", k, len(h.got), len(recs))
		}
		recs = recs[1:] // the probe's PING
		for j := 0; j < len(h.got); {
			end := j + 1
			for end < len(h.got) && h.got[end].read == h.got[j].read {
				end++
			}
			size := end - j
			res.reads++
			res.maxPerRead = max(res.maxPerRead, size)
			if size > 1 {
				res.shared += float64(size)
				spread = append(spread, recs[end-1].Replied-recs[j].Replied)
				first = append(first, h.got[j].arrival-recs[j].Replied)
			}
			for m := j; m < end; m++ {
				arrival = append(arrival, h.got[m].arrival-recs[m].Replied)
				read = append(read, h.got[m].read-recs[m].Replied)
				lag = append(lag, h.got[m].read-h.got[m].arrival)
			}
			j = end
		}
		res.replies += len(h.got)
	}
	res.perRead = float64(res.replies) / float64(res.reads)
	res.shared /= float64(res.replies)
	res.spread, res.arrival, res.read = quantilesOf(spread), quantilesOf(arrival), quantilesOf(read)
	res.firstOfShared, res.receiveLag = quantilesOf(first), quantilesOf(lag)
	return res, nil
}
