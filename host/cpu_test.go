package host

import (
	"errors"
	"math"
	"runtime"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       Ticks
		cpus       int
		err        bool
	}{
		{
			name: "linux 6",
			text: "cpu  15488 10 9171 300165 6067 1 866 42 7 0\n" +
				"cpu0 7370 5 4296 153323 439 0 393 21 3 0\n" +
				"cpu1 8118 5 4875 146842 5627 1 473 21 4 0\n" +
				"intr 123 4 5\nctxt 99\nbtime 1700000000\nprocesses 10\n",
			want: Ticks{User: 15488, Nice: 10, System: 9171, Idle: 300165, IOWait: 6067, IRQ: 1, SoftIRQ: 866, Steal: 42},
			cpus: 2,
		},
		{
			// Guest and guest_nice are already in user and nice: ignored.
			name: "guest time not added twice",
			text: "cpu 100 0 50 1000 0 0 0 0 80 0\ncpu0 100 0 50 1000 0 0 0 0 80 0\n",
			want: Ticks{User: 100, System: 50, Idle: 1000},
			cpus: 1,
		},
		{
			name: "old kernel: no iowait, irq, softirq, steal",
			text: "cpu 1 2 3 4\ncpu0 1 2 3 4\n",
			want: Ticks{User: 1, Nice: 2, System: 3, Idle: 4},
			cpus: 1,
		},
		{
			name: "per-CPU lines before the aggregate, and a gap in the numbering (offline CPU)",
			text: "cpu0 1 1 1 1 1 1 1 1\ncpu2 1 1 1 1 1 1 1 1\ncpu 2 2 2 2 2 2 2 2\n",
			want: Ticks{2, 2, 2, 2, 2, 2, 2, 2},
			cpus: 2,
		},
		{name: "no aggregate line", text: "cpu0 1 2 3 4\nintr 1\n", err: true},
		{name: "empty", text: "", err: true},
		{name: "short aggregate line", text: "cpu 1 2 3\n", err: true},
		{name: "not a number", text: "cpu 1 2 x 4\n", err: true},
		{name: "negative", text: "cpu 1 2 -3 4\n", err: true},
		{name: "two aggregate lines", text: "cpu 1 2 3 4\ncpu 1 2 3 4\n", err: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, cpus, err := parseStat([]byte(c.text))
			if (err != nil) != c.err {
				t.Fatalf("error %v, want error=%v", err, c.err)
			}
			if got != c.want || cpus != c.cpus {
				t.Errorf("got %+v on %d CPUs, want %+v on %d", got, cpus, c.want, c.cpus)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	const s = int64(time.Second)
	at := func(sec int64, host Ticks, self time.Duration) CPUSample {
		return CPUSample{At: 1e9 + sec*s, Host: host, CPUs: 2, Self: self}
	}
	base := Ticks{User: 1000, Nice: 10, System: 500, Idle: 9000, IOWait: 100, IRQ: 5, SoftIRQ: 20, Steal: 30}
	plus := func(t Ticks, d Ticks) Ticks {
		return Ticks{t.User + d.User, t.Nice + d.Nice, t.System + d.System, t.Idle + d.Idle,
			t.IOWait + d.IOWait, t.IRQ + d.IRQ, t.SoftIRQ + d.SoftIRQ, t.Steal + d.Steal}
	}
	for _, c := range []struct {
		name string
		a, b CPUSample
		want CPU
	}{
		{
			// 2 CPUs × 2 s × 100 Hz = 400 ticks: 100 idle, 20 waiting for
			// I/O, 40 stolen, the rest busy.
			name: "busy and stolen shares",
			a:    at(0, base, time.Second),
			b:    at(2, plus(base, Ticks{User: 150, Nice: 10, System: 60, Idle: 100, IOWait: 20, IRQ: 5, SoftIRQ: 15, Steal: 40}), 2500*time.Millisecond),
			want: CPU{Available: true, Seconds: 2, HostBusy: 280.0 / 400, HostSteal: 40.0 / 400, Self: 0.75, CPUs: 2},
		},
		{
			name: "all idle",
			a:    at(0, base, 0),
			b:    at(1, plus(base, Ticks{Idle: 200}), 0),
			want: CPU{Available: true, Seconds: 1, CPUs: 2},
		},
		{
			name: "no ticks between close samples",
			a:    at(0, base, 0),
			b:    CPUSample{At: 1e9 + 1000, Host: base, CPUs: 2, Self: time.Microsecond},
			want: CPU{Available: true, Seconds: 1e-6, CPUs: 2, Self: 1},
		},
		{
			// iowait can go backwards on a NO_HZ kernel: it counts as 0.
			name: "a counter that went backwards",
			a:    at(0, base, 0),
			b:    at(1, Ticks{User: base.User + 100, Nice: base.Nice, System: base.System, Idle: base.Idle + 100, IOWait: base.IOWait - 50, IRQ: base.IRQ, SoftIRQ: base.SoftIRQ, Steal: base.Steal}, 0),
			want: CPU{Available: true, Seconds: 1, HostBusy: 0.5, CPUs: 2},
		},
		{name: "missing first sample", a: CPUSample{}, b: at(1, base, 0)},
		{name: "missing second sample", a: at(1, base, 0), b: CPUSample{}},
		{name: "samples in the wrong order", a: at(2, base, 0), b: at(1, base, 0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Usage(c.a, c.b)
			if got.Available != c.want.Available || got.CPUs != c.want.CPUs || !near(got.Seconds, c.want.Seconds) ||
				!near(got.HostBusy, c.want.HostBusy) || !near(got.HostSteal, c.want.HostSteal) || !near(got.Self, c.want.Self) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// One smoke test on the real /proc.
func TestReadCPU(t *testing.T) {
	a, err := ReadCPU()
	if runtime.GOOS != "linux" {
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("error %v, want ErrUnavailable", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	b, err := ReadCPU()
	if err != nil {
		t.Fatal(err)
	}
	if a.CPUs < 1 || a.Host.Total() == 0 || b.At <= a.At || b.Self < a.Self {
		t.Fatalf("implausible samples %+v, %+v", a, b)
	}
	u := Usage(a, b)
	if !u.Available || u.HostBusy < 0 || u.HostBusy > 1 || u.HostSteal < 0 || u.HostSteal > u.HostBusy || u.Self < 0 {
		t.Errorf("implausible usage %+v", u)
	}
}
