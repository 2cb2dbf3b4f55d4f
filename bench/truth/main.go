// Command truth measures how close pacer's latencies are to the truth.
// An independent sink, in a process of its own, timestamps every command
// as its kernel receives it and every reply as it writes it; pacer sends
// request i as the sink's indexed command i on an open timeline, so the
// sink knows which request each command is. On loopback, reply write −
// intended send time is request i's true response time; pacer's own
// response time (kernel arrival of the reply − intended) must match it.
//
// For each case it reports, as medians over -rounds rounds:
//   - the p50, p99 and p99.9 of pacer's response time and of the truth,
//     and their differences (the target: p50 within 15 µs at 10k/s and
//     50k/s; p99 and p99.9 within 1% under a 100 ms stall every second);
//   - the receive clock pacer used and its receive lag p99;
//   - how late the first 100 requests reached the sink (their p90, from
//     their intended times) against the run's p99 of the same: a run
//     must start on time.
//
// The cases: 10k/s and 50k/s for -duration, then 10k/s with the sink
// stalling 100 ms every second. Run it on a quiet machine.
//
//	go run ./bench/truth
//	go run ./bench/truth -rounds 5 -duration 5s
//	go run ./bench/truth -receive-clock read      # the read instant, for comparison
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pacer-load/pacer/bench/internal/kit"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/sink"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
)

// tcase is one configuration measured.
type tcase struct {
	name         string
	rate         float64
	stall, every time.Duration
}

// measured is one round of one case.
type measured struct {
	pacer, truth  [3]float64 // p50, p99, p99.9 in µs
	clock         string
	receiveP99    float64 // µs
	firstP90      float64 // µs: the first 100 requests' lateness at the sink
	runP99        float64 // µs: the run's lateness at the sink
	sendLagP99    float64 // µs
	completed, of uint64
}

func main() {
	if sink.IsChild() {
		os.Exit(sink.RunChild())
	}
	rounds := flag.Int("rounds", 3, "rounds of every case (interleaved)")
	duration := flag.Duration("duration", 5*time.Second, "each run's timeline")
	conns := flag.Int("c", 10, "connections")
	clock := flag.String("receive-clock", "", "kernel (default where available) or read")
	flag.Parse()
	cases := []tcase{
		{name: "10k/s", rate: 10000},
		{name: "50k/s", rate: 50000},
		{name: "10k/s, sink stalls 100 ms every 1 s", rate: 10000, stall: 100 * time.Millisecond, every: time.Second},
	}
	results := make([][]measured, len(cases))
	for r := range *rounds {
		for i, c := range cases {
			m, err := measure(c, *duration, *conns, *clock)
			if err != nil {
				fmt.Fprintln(os.Stderr, "truth:", err)
				os.Exit(1)
			}
			fmt.Fprintf(os.Stderr, "round %d, %s: pacer p50 %.1f µs, truth %.1f µs; p99 %.1f / %.1f; p99.9 %.1f / %.1f\n",
				r+1, c.name, m.pacer[0], m.truth[0], m.pacer[1], m.truth[1], m.pacer[2], m.truth[2])
			results[i] = append(results[i], m)
		}
	}
	fmt.Printf("%d rounds of %s, %d connections, medians\n\n", *rounds, *duration, *conns)
	fmt.Printf("%-38s %-6s %10s %10s %9s %10s %10s %8s %10s %10s %8s %9s %9s %9s\n", "case", "clock",
		"p50 pacer", "p50 truth", "diff µs", "p99 pacer", "p99 truth", "diff %", "p99.9 pac", "p99.9 tru", "diff %",
		"rx lag99", "first100", "run p99")
	for i, c := range cases {
		ms := results[i]
		med := func(f func(measured) float64) float64 { return kit.Median(ms, f) }
		p := [3]float64{med(func(m measured) float64 { return m.pacer[0] }), med(func(m measured) float64 { return m.pacer[1] }), med(func(m measured) float64 { return m.pacer[2] })}
		t := [3]float64{med(func(m measured) float64 { return m.truth[0] }), med(func(m measured) float64 { return m.truth[1] }), med(func(m measured) float64 { return m.truth[2] })}
		fmt.Printf("%-38s %-6s %10.1f %10.1f %9.1f %10.1f %10.1f %8.2f %10.1f %10.1f %8.2f %9.1f %9.1f %9.1f\n", c.name, ms[0].clock,
			p[0], t[0], p[0]-t[0], p[1], t[1], 100*(p[1]-t[1])/t[1], p[2], t[2], 100*(p[2]-t[2])/t[2],
			med(func(m measured) float64 { return m.receiveP99 }), med(func(m measured) float64 { return m.firstP90 }),
			med(func(m measured) float64 { return m.runP99 }))
	}
	fmt.Println("\nfirst100: p90 of the first 100 requests' arrival at the sink − intended; run p99: the same over the run (µs).\nThe sink's first reads of a fresh connection come late and take several commands at once, each stamped with\nthe last one's arrival: first100 is an upper bound. pacer's own send lag of the first 100 is held to its run's\np99 by openloop.TestResponseTracksTheTruth.")
}

func measure(c tcase, d time.Duration, n int, clock string) (measured, error) {
	s, err := sink.StartChild(os.Args[0], nil, c.stall, c.every)
	if err != nil {
		return measured{}, err
	}
	ctx := context.Background()
	conns, err := conn.DialAll(ctx, conn.Options{Addr: s.Addr(), SkipProbe: true, Now: scheduler.Now, ReceiveClock: clock}, n)
	if err != nil {
		s.Close()
		return measured{}, err
	}
	// The sink, a child process, accepts the connections and enables its
	// receive timestamps on its own time: a command that reaches it before
	// would carry its late read instant, and the start would look late.
	time.Sleep(200 * time.Millisecond)
	rate := timeline.RatePerSecond(c.rate)
	tl := timeline.Uniform{Rate: rate}
	res, err := openloop.Run(ctx, conns, &sink.Indexed{}, openloop.Config{Timeline: tl, Rate: rate, Duration: d})
	records, cerr := s.Close()
	if err != nil {
		return measured{}, err
	}
	if cerr != nil {
		return measured{}, cerr
	}
	total := int(res.Counts.Scheduled)
	truth := sink.TruthOf(records, total)
	trueResp := histo.New()
	var atSink []int64
	for i := range total {
		if truth.Replied[i] == 0 {
			continue // not answered (a timeout or unsent): pacer has no response for it either
		}
		intended := res.T0 + tl.Offset(uint64(i))
		_ = trueResp.RecordValue(max(truth.Replied[i]-intended, 0))
		atSink = append(atSink, truth.Arrived[i]-intended)
	}
	m := measured{clock: res.ReceiveClock, completed: res.Counts.Completed, of: res.Counts.Scheduled}
	m.pacer, m.truth = quantiles(res.Response), quantiles(trueResp)
	m.receiveP99 = float64(res.Receive.ValueAtQuantile(99)) / 1e3
	m.sendLagP99 = float64(res.Lag.ValueAtQuantile(99)) / 1e3
	if len(atSink) > 100 {
		first := slices.Clone(atSink[:100])
		slices.Sort(first)
		m.firstP90 = float64(first[90]) / 1e3
		all := slices.Clone(atSink)
		slices.Sort(all)
		m.runP99 = float64(all[len(all)*99/100]) / 1e3
	}
	return m, nil
}

func quantiles(h *hdrhistogram.Histogram) [3]float64 {
	return [3]float64{float64(h.ValueAtQuantile(50)) / 1e3, float64(h.ValueAtQuantile(99)) / 1e3, float64(h.ValueAtQuantile(99.9)) / 1e3}
}
