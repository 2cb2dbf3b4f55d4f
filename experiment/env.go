// Package experiment runs what pacer measures beyond a single driver call,
// for the commands and for any Go program: a test once, open or closed
// (Env.RunOpen, Env.RunClosed), with its connections, its share of a
// sharded timeline, its live view and the server's side; the runs of a
// test pooled into one (Runs); the prefill of a keyspace (Env.Fill, per
// primary in a cluster); and what the load flags of an open run ask for
// (OpenLoad, Shape). Its subpackages run the sweeps and the capacity
// search (sweep), the closed/open comparison (compare), redis-benchmark's
// list of tests (bench) and the replay of a recorded trace (replay).
//
// It and its subpackages sit above the drivers (scheduler) and, for the
// subpackages' judging, the report; they get their connections and the
// server's side from a endpoint.Target. Only the command (cmd/pacer) is
// above them. An experiment never prints: it shows its runs through the
// Env's hooks, and returns results (and, in the subpackages, judged
// report tests).
package experiment

import (
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/host"
	"github.com/pacer-load/pacer/messages"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
)

// Env is what an experiment needs from the program around it.
type Env struct {
	Target *endpoint.Target
	// Server asks the server for its side of each test; nil: not asked.
	Server *endpoint.Server
	// Place is the shard this process sends and the tests' planned
	// starts; nil: the whole timeline, each test at once.
	Place *scheduler.Placement
	// Watch shows a run live (progress, connection changes, metrics): it
	// returns the hook to give the driver and what stops showing it. Nil:
	// nothing is shown.
	Watch func(Watched) (onStart func(*scheduler.Live), stop func())
	// Redact cleans what a result carries from the server (error texts may
	// echo a password) before it is judged or shown; nil: nothing to clean.
	Redact func(*scheduler.Result)
	// OnErrorReply sees every error reply's text (--errors); nil: none.
	OnErrorReply func([]byte)
	// Say receives notes for the user, one line each; nil drops them.
	Say func(string)
	// Quiet leaves out the note that a run waits for its planned start.
	Quiet bool
	// InProcess says the target is served by this process (the embedded
	// target), for the verdict's attribution.
	InProcess bool
	// HiccupInterval is every run's host hiccup meter interval, as the
	// scheduler's configurations take it (0: the default, negative: off).
	HiccupInterval time.Duration
	// WatchMessages shows a pubsub or stream run's deliveries live (the
	// metrics) under its test's name and mode; it returns what stops
	// showing them. Nil: not shown.
	WatchMessages func(test, mode string, m *messages.Meter) (end func())

	// serverProc is the target's process on this host, found once
	// (ServerProcess); procLooked says it was looked for.
	serverProc *host.ServerProcess
	procLooked bool
}

// ServerProcess is the target's process when it runs on this host in a
// process of its own (host.FindServer, confirmed by the process_id the
// server gave, if any): its scheduler statistics are read around every
// interval of every run. It is looked for once; nil for a remote target,
// a cluster, the embedded target (pacer's own process: the hiccup meter
// sees its delays) or a process that cannot be found, which Say notes
// once.
func (e *Env) ServerProcess() *host.ServerProcess {
	if e.procLooked {
		return e.serverProc
	}
	e.procLooked = true
	o := e.Target.Options
	if e.InProcess || e.Target.Cluster || !host.IsLocal(o.Network, o.Addr) {
		return nil
	}
	pid := 0
	if e.Server != nil && e.Server.ID != nil {
		pid = e.Server.ID.ProcessID
	}
	sp, err := host.FindServer(o.Network, o.Addr, pid)
	switch {
	case err != nil:
		if e.Say != nil && !e.Quiet {
			e.Say("pacer: the target is on this host, but its process was not found (" + err.Error() + "): its waits for a CPU are not measured")
		}
		return nil
	case sp.Self:
		return nil
	}
	e.serverProc = &sp
	return e.serverProc
}

// InProcessEnv is the Env of a target this process serves at addr (the
// embedded target), as `pacer run --embedded` sets it up, minus the
// server's side and the live view.
func InProcessEnv(addr string) *Env {
	return &Env{Target: &endpoint.Target{Options: conn.Options{Addr: addr, Now: scheduler.Now}}, InProcess: true}
}

// Command is a test that sends one command again and again, as `pacer run
// -- GET key` does: Command("get", "GET", "GET", "key").
func Command(id, title string, args ...string) Test {
	cmd := conn.AppendCommand(nil, args...)
	return Test{ID: id, Title: title, Stream: func(uint64) (scheduler.Commands, error) {
		return scheduler.Fixed(cmd), nil
	}}
}

// Watched names a run for its live view.
type Watched struct {
	// Name is the run's display name ("GET at 1000/s (run 2/3)") as the
	// lines about its connections say it, Test the name its metrics carry
	// (the test's title), Mode "open" or "closed".
	Name, Test, Mode string
	// Label is what progress lines call it; Name when empty.
	Label string
}

// Test is one workload: what it is called and what it sends.
type Test struct {
	// ID is the stable identifier (get, mix, custom), Title the display
	// name.
	ID, Title string
	// Names are the commands of a mix, by kind (one: no per-command
	// results).
	Names []string
	// Recipe is what the stream sends, for routing in a Redis Cluster.
	Recipe *scenarios.Recipe
	// Stream returns a command stream drawn with seed.
	Stream func(seed uint64) (scheduler.Commands, error)
}

// WaitNotes is where Place.Wait says what it waits for.
func (e *Env) WaitNotes() func(string) {
	if e.Quiet {
		return nil
	}
	return e.Say
}

// watch starts the live view of a run (nothing without Watch).
func (e *Env) watch(w Watched) (func(*scheduler.Live), func()) {
	if e.Watch == nil {
		return nil, func() {}
	}
	return e.Watch(w)
}

// Finish completes a run's result: the TLS handshakes of its
// connections, and what came from the server cleaned.
func (e *Env) Finish(res *scheduler.Result) {
	if res == nil {
		return
	}
	res.TLS = e.Target.TakeHandshakes()
	res.TargetLocal = host.IsLocal(e.Target.Options.Network, e.Target.Options.Addr)
	res.TargetInProcess = e.InProcess
	if e.Redact != nil {
		e.Redact(res)
	}
}
