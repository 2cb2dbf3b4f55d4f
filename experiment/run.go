package experiment

import (
	"context"
	"errors"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/scheduler/closedloop"
	"github.com/pacer-load/pacer/scheduler/openloop"
	"github.com/pacer-load/pacer/serverinfo"
	"github.com/pacer-load/pacer/timeline"
)

// Open is one open-model run of a test.
type Open struct {
	Test Test
	// Name is the run's display name; Label what its progress lines say
	// (Name when empty); Metric the name the metrics and the connection
	// lines give it (when empty: the metrics say Test.Title, the lines
	// Name).
	Name, Label, Metric string
	// Timeline is the whole timeline (Env.Place takes this process's
	// share of it); Config the driver's settings, whose Timeline, Start,
	// Name, CommandNames, OnStart, Redial, OnErrorReply and Cluster the run
	// fills in.
	Timeline timeline.Timeline
	Config   openloop.Config
	// Conns is the connections to open (per primary with a cluster,
	// routed by Keys).
	Conns int
	Keys  endpoint.Keys
	// Seed draws the command stream (Env.Place makes it the shard's own),
	// unless Stream is given (a stream continued from an earlier run).
	Seed   uint64
	Stream scheduler.Commands
	// Decide, when set, gives the run a budget to reach a verdict in
	// (--decide-within; see Decide): Config.Duration is then the planned
	// duration, and the run may go on past it.
	Decide *Decide
	// Visibility is probes per second measuring the replicas' visibility
	// lag beside the run (package visibility; 0: none).
	Visibility float64
}

// RunOpen dials, runs and finishes one open run: it waits for the planned
// start, opens the connections (to each primary of a cluster), runs the
// timeline's share of this process, and returns the result with what the
// server counted meanwhile (for a cluster, its primaries' sum, each one's
// in Stats.Nodes). Interrupted while waiting, it returns nothing.
func (e *Env) RunOpen(ctx context.Context, o Open) (*scheduler.Result, *serverinfo.Stats, error) {
	stream := o.Stream
	if stream == nil {
		var err error
		if stream, err = o.Test.Stream(e.Place.StreamSeed(o.Seed)); err != nil {
			return nil, nil, usage.Errorf("%w", err)
		}
	}
	if err := e.Place.Wait(ctx, e.WaitNotes()); err != nil {
		return nil, nil, nil // interrupted while waiting: ctx says so
	}
	q := o.Decide.waitQuiet(ctx) // before the server's counters are read
	e.Target.TakeHandshakes()    // the run's own handshakes only
	cfg := o.Config
	var conns []*conn.Conn
	var err error
	since := func() *serverinfo.Stats { return nil }
	addr, epoch := e.Target.Options.Addr, uint64(0)
	cfg.Reads = e.Target.Reads(ctx, o.Test.Recipe)
	if e.Target.Cluster {
		if conns, cfg.Cluster, err = e.Target.OpenCluster(ctx, o.Conns, o.Keys, cfg.ReadFrom != openloop.ReadPrimary); err != nil {
			return nil, nil, err
		}
		since = e.Server.MarkNodes(ctx, cfg.Cluster.Nodes)
	} else {
		var nodes []scheduler.Node
		if conns, addr, epoch, nodes, err = e.DialStandalone(ctx, &cfg, o.Conns); err != nil {
			return nil, nil, err
		}
		since = e.markServer(ctx, nodes)
	}
	e.Topology(&cfg, addr, epoch)
	prober, err := e.probe(ctx, o.Visibility, &cfg)
	if err != nil {
		endpoint.CloseAll(conns)
		return nil, nil, err
	}
	whole := o.Timeline
	if cfg.Timeline, err = e.Place.Timeline(whole); err != nil {
		endpoint.CloseAll(conns)
		return nil, nil, usage.Flagf("shard", "{shard}: %v", err)
	}
	defer e.Place.Next(whole, cfg.Duration, cfg.Requests, cfg.Drain)
	cfg.Name, cfg.CommandNames = o.Name, o.Test.Names
	cfg.Start = e.Place.Instant()
	cfg.Redial = e.Target.Redial
	cfg.OnErrorReply = e.OnErrorReply
	cfg.HiccupInterval = e.HiccupInterval
	cfg.ServerProcess = e.ServerProcess()
	decided := e.withDecide(o.Decide, q, &cfg, len(conns), since)
	w := Watched{Name: o.Name, Test: o.Test.Title, Mode: "open", Label: o.Label}
	if o.Metric != "" {
		w.Name, w.Test = o.Metric, o.Metric
	}
	if w.Label == "" {
		w.Label = o.Name
	}
	onStart, stop := e.watch(w)
	cfg.OnStart = onStart
	if prober != nil {
		cfg.OnStart = func(l *scheduler.Live) {
			l.SetVisibility(prober.Lags)
			if onStart != nil {
				onStart(l)
			}
		}
	}
	res, err := openloop.Run(ctx, conns, stream, cfg)
	if prober != nil {
		if v := prober.Stop(); res != nil {
			res.Visibility = v
		}
	}
	stop()
	e.Place.Started(res)
	if res == nil {
		return nil, nil, err
	}
	decided(res)
	e.Finish(res)
	return res, since(), err
}

// Closed is one closed-loop run of a test.
type Closed struct {
	Test Test
	Name string
	// Label is what progress lines call it (Name when empty); Metric the
	// test's name for the metrics (Test.Title when empty).
	Label, Metric string
	// Config is the driver's settings; the run fills in Name,
	// CommandNames, NewCommands, OnStart, OnErrorReply and Cluster.
	Config closedloop.Config
	// Conns is the client connections (spread over Primaries' nodes in a
	// cluster, redis-benchmark's way).
	Conns     int
	Primaries *endpoint.Primaries
	// StreamSeed is the seed of connection i's command stream;
	// ClusterSeed draws each connection's slots in a cluster.
	StreamSeed  func(i int) uint64
	ClusterSeed uint64
	// Reconnect replaces the connection after every batch
	// (redis-benchmark's -k 0).
	Reconnect bool
	// Placed starts the run at the Env's planned start (a closed loop has
	// no timeline to share: it starts when the instant comes).
	Placed bool
}

// RunClosed dials, runs and finishes one closed-loop run, returning the
// result with what the server counted meanwhile (for a cluster, as
// RunOpen's).
// Interrupted while waiting for its start, it returns nothing.
func (e *Env) RunClosed(ctx context.Context, c Closed) (*scheduler.Result, *serverinfo.Stats, error) {
	if c.Placed {
		if err := e.Place.Wait(ctx, e.WaitNotes()); err != nil {
			return nil, nil, nil
		}
	}
	e.Target.TakeHandshakes() // the run's own handshakes only
	cfg := c.Config
	var conns []*conn.Conn
	var err error
	since := func() *serverinfo.Stats { return nil }
	if c.Primaries != nil {
		var of []int
		if conns, of, err = c.Primaries.Dial(ctx, c.Conns); err != nil {
			return nil, nil, err
		}
		cfg.Cluster = c.Primaries.Closed(of, c.ClusterSeed)
		since = e.Server.MarkNodes(ctx, c.Primaries.Nodes)
	} else {
		primary, epoch := e.Target.Primary()
		if conns, err = e.Target.BenchPool(ctx, primary, c.Conns); err != nil {
			return nil, nil, err
		}
		since = e.Server.Mark(ctx)
		if f := e.Target.Follower(); f != nil {
			cfg.Follow, cfg.FollowEpoch, cfg.Redial = f, epoch, e.Target.Redial
		}
	}
	if c.Placed {
		if err := e.Place.SleepUntil(ctx); err != nil {
			endpoint.CloseAll(conns)
			return nil, nil, nil
		}
		defer e.Place.Next(timeline.Uniform{}, cfg.Duration, 0, scheduler.DefaultDrain)
	}
	var streamErr error
	cfg.Name, cfg.CommandNames = c.Name, c.Test.Names
	cfg.NewCommands = func(i int) scheduler.Commands {
		s, err := c.Test.Stream(c.StreamSeed(i))
		if err != nil {
			streamErr = err
		}
		return s
	}
	if c.Reconnect {
		cfg.Reconnect = e.Target.Redial
	}
	cfg.OnErrorReply = e.OnErrorReply
	cfg.HiccupInterval = e.HiccupInterval
	if c.Primaries == nil {
		cfg.ServerProcess = e.ServerProcess()
	}
	label, metric := c.Label, c.Metric
	if label == "" {
		label = c.Name
	}
	if metric == "" {
		metric = c.Test.Title
	}
	onStart, stop := e.watch(Watched{Name: c.Name, Test: metric, Mode: "closed", Label: label})
	cfg.OnStart = onStart
	res, err := closedloop.Run(ctx, conns, cfg)
	if c.Primaries != nil {
		c.Primaries.Wait() // the slot map refreshes its redirects started
	}
	stop()
	if c.Placed {
		e.Place.Started(res)
	}
	if streamErr != nil {
		return nil, nil, usage.Errorf("command: %w", streamErr)
	}
	if res == nil {
		return nil, nil, err
	}
	e.Finish(res)
	return res, since(), err
}

// IsErrorReply reports whether a closed run ended on an error reply or a
// lost connection, which redis-benchmark reports in its own words.
func IsErrorReply(err error) bool {
	var er *closedloop.ErrorReply
	var lost *closedloop.ConnLostError
	return errors.As(err, &er) || errors.As(err, &lost)
}
