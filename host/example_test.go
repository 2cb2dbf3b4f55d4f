package host_test

import (
	"fmt"
	"time"

	"github.com/pacer-load/pacer/host"
)

// A meter runs beside a test: started before it, stopped after, its
// histograms next to the test's latency histograms.
func ExampleMeter() {
	m, err := host.NewMeter(host.MeterConfig{Interval: host.DefaultInterval, Bucket: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	m.Start()
	time.Sleep(20 * time.Millisecond) // the test
	r := m.Stop()

	// r.Total.ValueAtQuantile(99) is the p99 of the host's hiccups, in ns.
	fmt.Println("slept", r.Interval, "between wakes")
	fmt.Println("every wake recorded:", r.Total.TotalCount() >= int64(r.Wakes))
	// Output:
	// slept 1ms between wakes
	// every wake recorded: true
}

// Two samples around a test give the host's busy and stolen shares and
// the process's own CPU.
func ExampleUsage() {
	a := host.CPUSample{At: 1e9, CPUs: 2, Self: time.Second,
		Host: host.Ticks{User: 1000, System: 500, Idle: 8000, Steal: 100}}
	b := host.CPUSample{At: 3e9, CPUs: 2, Self: 2500 * time.Millisecond,
		Host: host.Ticks{User: 1240, System: 580, Idle: 8060, Steal: 120}} // 2 s later: 400 ticks on 2 CPUs

	u := host.Usage(a, b)
	fmt.Printf("host %.0f%% busy, %.0f%% stolen; pacer %.2f cores\n", 100*u.HostBusy, 100*u.HostSteal, u.Self)
	// Output:
	// host 85% busy, 5% stolen; pacer 0.75 cores
}
