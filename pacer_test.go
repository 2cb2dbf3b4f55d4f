package pacer_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
)

// A load the library cannot run is a *ConfigError naming the Go field,
// never a command-line flag.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		field string
		load  pacer.Load
	}{
		{"Rate", pacer.Load{}},
		{"Connections", pacer.Load{Rate: 10, Connections: 20000}},
		{"Test", pacer.Load{Rate: 10, Test: "nosuchtest"}},
		{"Test", pacer.Load{Rate: 10, Test: "get", Command: []string{"GET", "k"}}},
		{"SLO", pacer.Load{Rate: 10, SLO: "p99<=soon"}},
		{"Arrival", pacer.Load{Rate: 10, Arrival: "bursty"}},
		{"Pacing", pacer.Load{Rate: 10, Pacing: "fast"}},
	} {
		_, err := pacer.Run(ctx, c.load)
		var ce *pacer.ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field {
			t.Errorf("%+v: error %v, want a ConfigError of %s", c.load, err, c.field)
			continue
		}
		if strings.Contains(err.Error(), "--") {
			t.Errorf("%+v: %q names a flag", c.load, err)
		}
	}
	if _, err := pacer.Serve(pacer.Faults{Delay: "later"}); err == nil {
		t.Error("a bad delay was accepted")
	}
	res := &pacer.Result{}
	var ce *pacer.ConfigError
	if err := res.Check("p99 <= "); !errors.As(err, &ce) {
		t.Errorf("a bad SLO: %v, want a ConfigError", err)
	}
}

// Against a real redis-server: the counts add up, the figures are filled,
// the server's side is asked, and a generous SLO passes; one no server
// can meet is the server's miss.
func TestRunAgainstRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	res, err := pacer.Run(context.Background(), pacer.Load{Addr: srv.Addr, Rate: 2000, Duration: time.Second,
		Test: "set", Keyspace: 1000, Connections: 4})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Counts
	if c.Scheduled != 2000 || c.Completed+c.Errors+c.Timeouts+c.Unsent != c.Scheduled || c.Completed == 0 {
		t.Fatalf("counts %+v", c)
	}
	if res.Response.Count == 0 || res.Response.P99 <= 0 || res.Response.P50 > res.Response.P99 || res.Service.P50 <= 0 {
		t.Fatalf("latencies %+v / %+v", res.Response, res.Service)
	}
	if res.Test == nil || res.Test.Server == nil || res.Test.Server.Commands["set"].Calls == 0 {
		t.Fatalf("the server's side was not asked: %+v", res.Test.Server)
	}
	if n, err := srv.Calls("set"); err != nil || n < c.Completed {
		t.Fatalf("the server ran %d SETs (%v), pacer completed %d", n, err, c.Completed)
	}
	if err := res.Check("p99<=1s,errors<1%"); err != nil {
		t.Fatalf("a generous SLO: %v", err)
	}
	err = res.Check("p50<=1us")
	if !errors.Is(err, pacer.ErrFail) && !errors.Is(err, pacer.ErrInconclusive) {
		t.Fatalf("p50<=1us: %v, want a miss", err)
	}
}

// Bench and Diff: two closed-loop runs of one server compared. The
// words are whatever the runs say; the document holds the test, matched.
func TestBenchAndDiff(t *testing.T) {
	t.Parallel()
	srv, err := pacer.Serve(pacer.Faults{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var runs []*pacer.Result
	for range 2 {
		res, err := pacer.Bench(context.Background(), pacer.BenchLoad{Load: pacer.Load{Addr: srv.Addr(), Keyspace: 100}, Clients: 4, Requests: 5000})
		if err != nil {
			t.Fatal(err)
		}
		if res.Counts.Completed != 5000 {
			t.Fatalf("completed %d", res.Counts.Completed)
		}
		runs = append(runs, res)
	}
	d, err := pacer.Diff(runs[:1], runs[1:], pacer.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Doc.Tests) != 1 || d.Outcome != pacer.Pass {
		t.Fatalf("diff %+v", d)
	}
	if _, err := pacer.Diff(runs[:1], runs[1:], pacer.DiffOptions{MaxRegression: "p99:lots"}); err == nil {
		t.Fatal("a bad gate was accepted")
	}
}

// Importing the facade pulls in no plotting, PDF or fonts.
func TestFacadeImportsNoPlotting(t *testing.T) {
	testrun.SkipShort(t, "runs go list")
	out, err := exec.Command("go", "list", "-deps", "github.com/pacer-load/pacer").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "gonum.org/v1/plot") || strings.Contains(dep, "fpdf") || strings.Contains(dep, "go-fonts") {
			t.Fatalf("the facade imports %s", dep)
		}
	}
}
