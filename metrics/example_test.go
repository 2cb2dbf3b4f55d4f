package metrics_test

import (
	"context"
	"fmt"
	"log"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/metrics"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/timeline"
)

// A Collector exposes a running test's live numbers to Prometheus: Watch
// it from the driver's OnStart, end it when the run returns; its final
// numbers stay. Exporter (Listen) serves them at /metrics; here a registry
// gathers them directly.
func ExampleCollector() {
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	ctx := context.Background()
	conns, err := conn.DialAll(ctx, conn.Options{Addr: srv.Addr(), Now: scheduler.Now}, 2)
	if err != nil {
		log.Fatal(err)
	}

	c := metrics.NewCollector(nil)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	end := func() {}
	rate := timeline.RatePerSecond(1000)
	_, err = openloop.Run(ctx, conns, scheduler.Fixed(conn.AppendCommand(nil, "PING")), openloop.Config{
		Timeline: timeline.Uniform{Rate: rate}, Rate: rate, Requests: 50,
		OnStart: func(l *scheduler.Live) { end = c.Watch("PING", metrics.ModeOpen, l) },
	})
	end()
	if err != nil {
		log.Fatal(err)
	}

	families, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range families {
		switch f.GetName() {
		case "pacer_requests_sent_total", "pacer_requests_completed_total", "pacer_test_running":
			for _, m := range f.GetMetric() {
				v := m.GetCounter().GetValue() + m.GetGauge().GetValue() // whichever it is
				labels := map[string]string{}
				for _, lp := range m.GetLabel() {
					labels[lp.GetName()] = lp.GetValue()
				}
				fmt.Printf("%s{mode=%q,test=%q} %v\n", f.GetName(), labels["mode"], labels["test"], v)
			}
		case "pacer_response_seconds":
			fmt.Println(f.GetName()+"_count", f.GetMetric()[0].GetHistogram().GetSampleCount())
		}
	}
	// Output:
	// pacer_requests_completed_total{mode="open",test="PING"} 50
	// pacer_requests_sent_total{mode="open",test="PING"} 50
	// pacer_response_seconds_count 50
	// pacer_test_running{mode="open",test="PING"} 0
}
