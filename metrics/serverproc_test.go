package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pacer-load/pacer/host"
)

// A local server's process: its CPU, its wait for a CPU, its slices and
// preemptions, and, when its threads' states were looked at, the looks
// and those that found its busiest thread waiting for the disk, as
// counters that pass Prometheus's lint. Without looks, the two are absent.
func TestCollectorServerProcess(t *testing.T) {
	t.Parallel()
	for _, looks := range []uint64{300, 0} {
		c := NewCollector(nil)
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)
		f := newFake(true)
		f.server = serverSnap{ok: true, u: host.ProcUsage{Seconds: 3, CPU: 2 * time.Second, Wait: 500 * time.Millisecond,
			Slices: 100, Involuntary: 7, Looks: looks, DiskLooks: looks / 10}}
		end := c.watch("SET", ModeOpen, f)
		fams := scrape(t, reg, acceptText)
		lv := map[string]string{"test": "SET", "mode": "open"}
		want := map[string]float64{
			"pacer_server_process_cpu_seconds_total": 2, "pacer_server_process_cpu_wait_seconds_total": 0.5,
			"pacer_server_process_timeslices_total": 100, "pacer_server_process_involuntary_switches_total": 7,
		}
		if looks > 0 {
			want["pacer_server_process_state_looks_total"] = 300
			want["pacer_server_process_disk_wait_looks_total"] = 30
		}
		for name, v := range want {
			m := find(t, fams, name, lv)
			if m == nil {
				t.Errorf("looks %d: no %s", looks, name)
				continue
			}
			if got := m.GetCounter().GetValue(); got != v {
				t.Errorf("looks %d: %s = %v, want %v", looks, name, got, v)
			}
		}
		if looks == 0 {
			for _, name := range []string{"pacer_server_process_state_looks_total", "pacer_server_process_disk_wait_looks_total"} {
				if _, ok := fams[name]; ok {
					t.Errorf("no looks: %s is served", name)
				}
			}
		}
		problems, err := testutil.CollectAndLint(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
		end()
	}
}
