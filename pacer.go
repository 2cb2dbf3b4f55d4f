// Package pacer is pacer as a Go library: the load the command line runs,
// in a few lines of a Go test or program, measured the same way and
// judged by the same verdict.
//
//	res, err := pacer.Run(ctx, pacer.Load{Addr: addr, Rate: 5000, Duration: 3 * time.Second,
//		Command: []string{"GET", "key:__rand_int__"}})
//	if err != nil {
//		t.Fatal(err)
//	}
//	if err := res.Check("p99<=2ms,errors<0.1%"); err != nil {
//		t.Fatal(err)
//	}
//
// Run is the open model (`pacer run`): requests leave on a fixed-rate
// timeline that does not wait for replies, and latency counts from each
// request's intended send time, so a server's stall shows in the
// percentiles. Bench is the closed loop (`pacer bench`). Serve starts the
// embedded target, with faults, in this process; Diff compares two sets
// of results as `pacer diff` does.
//
// Every default is the command line's: 50 connections, uniform arrivals,
// auto pacing, 2 s of drain, 1 s intervals. A Result holds the typed
// figures and the verdict; Result.Test is the whole result as the JSON
// document (docs/json.md) holds it.
//
// Stability: pacer is v0. The names and fields of this package are meant
// to last, and changes will be additions where possible; the packages
// below it (scheduler, report, experiment, …) are pacer's own layers and
// change more freely. Importing this package does not pull in plotting.
package pacer

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/experiment"
	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
	"github.com/pacer-load/pacer/verdict"
)

// Load is an open-model run, as `pacer run` takes it. Only Rate is
// required; a zero field takes the command line's default.
type Load struct {
	// Addr is the server, host:port (default 127.0.0.1:6379), or a unix
	// socket's path (a name containing '/').
	Addr string
	// User and Password authenticate (AUTH); TLS, when set, speaks TLS.
	User, Password string
	TLS            *tls.Config
	// Cluster routes every command to the primary owning its key (Redis
	// Cluster), with Connections per primary.
	Cluster bool

	// Rate is the requests per second the timeline intends (required).
	Rate float64
	// Duration is the measured timeline (default 10 s), or Requests the
	// requests to send (Duration then follows from the rate).
	Duration time.Duration
	Requests int
	// Warmup is sent before the measured window and not measured.
	Warmup time.Duration

	// Command is one command to send, a template: __rand_int__ (a key
	// number below Keyspace), __key__, __data__ (DataSize bytes) as in
	// `pacer run -- CMD ARGS`. Test names a test of redis-benchmark's
	// catalogue instead ("get", "set", "incr", …; default "get" when
	// Command is empty).
	Command []string
	Test    string
	// Keyspace is -r: the key numbers __rand_int__ draws from (default
	// redis-benchmark's: 0, one key); DataSize is -d (default 3 bytes).
	Keyspace int
	DataSize int

	// Connections (default 50), Arrival "uniform" (default) or
	// "poisson", Pacing "auto" (default), "precise" or "coarse".
	Connections int
	Arrival     string
	Pacing      string
	// Seed draws Poisson arrivals and random keys (default 1).
	Seed uint64
	// Drain waits for replies after the timeline (default 2 s); Timeout
	// ends a request that waited longer (default: none).
	Drain, Timeout time.Duration
	// Interval cuts the run into intervals (default 1 s).
	Interval time.Duration
	// SLO, when given, is judged into Result.Outcome and bounds the send
	// lag the pacing allows, as --slo does ("p99<=2ms,errors<0.1%").
	// Result.Check judges any SLO after the run.
	SLO string
}

// defaults is the command line's defaults, for the library.
func (l Load) withDefaults() Load {
	if l.Addr == "" {
		l.Addr = "127.0.0.1:6379"
	}
	if l.Duration == 0 && l.Requests == 0 {
		l.Duration = 10 * time.Second
	}
	if l.Requests > 0 {
		l.Duration = 0 // -n bounds the run, not --duration
	}
	if l.Connections == 0 {
		l.Connections = 50
	}
	if l.Arrival == "" {
		l.Arrival = "uniform"
	}
	if l.Pacing == "" {
		l.Pacing = "auto"
	}
	if l.Seed == 0 {
		l.Seed = 1
	}
	if l.Drain == 0 {
		l.Drain = scheduler.DefaultDrain
	}
	if l.Interval == 0 {
		l.Interval = scheduler.DefaultInterval
	}
	if l.DataSize == 0 {
		l.DataSize = 3
	}
	return l
}

// ConfigError is a Load, BenchLoad or SLO that cannot run: Field names
// the field (as the Go struct spells it), Err says why.
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string { return "pacer: " + e.Field + ": " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Run runs one open-model test and returns its result, judged without an
// SLO (Result.Check judges one). A run that loses its target returns the
// result and an error; ctx's cancellation ends the timeline early, the
// result then marked Interrupted.
func Run(ctx context.Context, l Load) (*Result, error) {
	l = l.withDefaults()
	if l.Rate <= 0 {
		return nil, configErr("Rate", "want requests per second above 0")
	}
	if l.Duration < 0 || l.Requests < 0 {
		return nil, configErr("Duration", "want a positive duration or request count")
	}
	if l.Connections < 0 || l.Connections > 10000 {
		return nil, configErr("Connections", "%d: want 1 to 10000", l.Connections)
	}
	if l.Arrival != "uniform" && l.Arrival != "poisson" {
		return nil, configErr("Arrival", "%q: want uniform or poisson", l.Arrival)
	}
	if _, ok := scheduler.ParsePacing(l.Pacing); !ok {
		return nil, configErr("Pacing", "%q: want auto, precise or coarse", l.Pacing)
	}
	if l.Drain < 0 || l.Timeout < 0 {
		return nil, configErr("Drain", "drain %v, timeout %v: want positive durations", l.Drain, l.Timeout)
	}
	test, err := l.test()
	if err != nil {
		return nil, err
	}
	slo, err := parseSLO(l.SLO)
	if err != nil {
		return nil, err
	}
	flags := experiment.OpenLoadFlags{Arrival: &l.Arrival, Pacing: l.Pacing, Drain: l.Drain, Timeout: l.Timeout,
		TimeoutSet: l.Timeout != 0, Conns: l.Connections, SLO: slo, MaxBuffer: bytesize.Format(conn.DefaultMaxBuffer)}
	load, err := flags.Parse()
	if err != nil {
		return nil, configErr("Load", "%s", strings.TrimPrefix(err.Error(), "pacer: "))
	}
	rate := timeline.RatePerSecond(l.Rate)
	var tl timeline.Timeline = timeline.Uniform{Rate: rate}
	if l.Arrival == "poisson" {
		tl = timeline.NewPoisson(rate, l.Seed)
	}
	oc := load.Open(l.Interval)
	oc.Rate, oc.Warmup = rate, l.Warmup
	oc.Duration, oc.Requests = experiment.Shape{Duration: l.Duration, Requests: uint64(l.Requests), Warmup: l.Warmup}.Bounds(tl)
	env, closeEnv := l.env(ctx)
	defer closeEnv()
	var keys endpoint.Keys
	if l.Cluster {
		if keys, err = endpoint.ClusterKeys(ctx, env.Target.Options, test.Recipe); err != nil {
			return nil, configErr("Cluster", "%s", strings.TrimPrefix(err.Error(), "Cluster: "))
		}
	}
	res, st, err := env.RunOpen(ctx, experiment.Open{Test: test, Name: test.Title, Timeline: tl, Conns: l.Connections,
		Keys: keys, Seed: l.Seed, Config: oc})
	if res == nil {
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	t, _, jerr := verdict.NewTest(res, report.TestOptions{ID: test.ID, Server: st, Percentiles: true}, slo)
	if jerr != nil {
		return nil, jerr
	}
	return newResult(t), err
}

// test is the workload l asks for, compiled as `pacer run` compiles it.
func (l Load) test() (experiment.Test, error) {
	if l.Keyspace < 0 || l.DataSize < 0 || l.DataSize > scenarios.MaxValueSize {
		return experiment.Test{}, configErr("Keyspace", "keyspace %d, data size %d: want 0 or more, values at most %d bytes", l.Keyspace, l.DataSize, scenarios.MaxValueSize)
	}
	o := scenarios.Options{Keyspace: uint64(l.Keyspace), Sizes: scenarios.FixedSize(l.DataSize), Cluster: l.Cluster}
	var recipe *scenarios.Recipe
	var err error
	field := "Test"
	switch {
	case len(l.Command) > 0 && l.Test != "":
		return experiment.Test{}, configErr("Test", "give Command or Test, not both")
	case len(l.Command) > 0:
		field = "Command"
		recipe, err = scenarios.BuildRecipe("", []scenarios.Custom{{Args: l.Command, Weight: 1}}, o)
	default:
		name := strings.ToLower(l.Test)
		if name == "" {
			name = "get"
		}
		if !slices.Contains(scenarios.MixNames(), name) {
			return experiment.Test{}, configErr("Test", "unknown test %q (the catalogue: %s)", l.Test, strings.Join(scenarios.MixNames(), ", "))
		}
		recipe, err = scenarios.BuildRecipe(name+":1", nil, o)
	}
	if err == nil {
		_, err = recipe.Build() // a template that cannot compile fails here, not in the run
	}
	if err != nil {
		return experiment.Test{}, &ConfigError{Field: field, Err: err}
	}
	return experiment.Test{ID: recipe.ID(), Title: recipe.Title(), Recipe: recipe, Stream: func(seed uint64) (scheduler.Commands, error) {
		m, err := recipe.Build()
		if err != nil {
			return nil, err
		}
		return scenarios.NewMixStream(m, seed, nil), nil
	}}, nil
}

// env is the experiment environment of l's target, as the command line
// sets it up without a terminal: the server asked for its side of the
// test, no live view.
func (l Load) env(ctx context.Context) (*experiment.Env, func()) {
	network := "tcp"
	if strings.Contains(l.Addr, "/") {
		network = "unix"
	}
	opts := conn.Options{Network: network, Addr: l.Addr, User: l.User, Password: l.Password, TLS: l.TLS, Now: scheduler.Now}
	tgt := &endpoint.Target{Options: opts, Cluster: l.Cluster}
	env := &experiment.Env{Target: tgt, Server: endpoint.AskServer(ctx, opts, nil, nil), InProcess: inProcess(l.Addr)}
	return env, func() {}
}
