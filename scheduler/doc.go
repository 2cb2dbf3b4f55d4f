// Package scheduler sends each request at its intended instant and
// measures what happened to it: the open driver that walks a timeline
// (package timeline: uniform, Poisson, stages, a replayed trace, a shard
// of any of them; RunOpen, RunOpenSteps), and the facts every driver
// returns and records them with: Result, Counts, Intervals, per-command
// and per-node results, Merge and Pool, the Live view, and the recording
// API the drivers share (Series, HostWatch, CommandStats, CommandTally,
// LiveHooks). The closed loop, redis-benchmark's model, is package
// scheduler/closedloop, which fills in the same facts. It sits between
// the experiments above it (package experiment and its subpackages, the
// command) and the transport, templates, timelines and histograms below
// it (conn, scenarios, timeline, histo); it returns facts and decides
// nothing: whether a Result can be trusted, and whether it meets an SLO,
// is verdict.Judge's call.
//
// # Timeline and intended time
//
// A timeline.Timeline gives request i's offset from the run's start t0,
// computed from i alone, never by adding a period to the last instant:
//
//	intended(i) = t0 + Offset(i)
//
// So a generator that falls behind sends its backlog at once, each request
// still carrying its own intended time, and the timeline never shifts.
// Response time (arrival − intended time) is the headline number of an
// open run; service time (arrival − write) and send lag (write −
// intended time) are measured beside it, and a request that could not be
// sent in time is counted unsent, never dropped silently.
//
// # The pacer
//
// An open run's pacer is one goroutine that walks the timeline: at each
// wake it queues every command due by now, writes them with one write per
// connection (natural pipelining), and sleeps until the next intended
// instant. It never waits for a reply and never sleeps per command; how it
// sleeps (Pacing: precise, coarse or auto) trades CPU for send lag, and
// the lag achieved is always in the result.
//
//	timeline i ──► pacer: commands due ≤ now ──► one write per connection
//	connection's FIFO {intended, written, kind} ──► its reader: reply
//	    ──► response = arrival − intended, service = arrival − written
//
// # Lanes
//
// Each connection of an open run runs in a lane: a place in the run that
// outlives the connection. When a connection dies (or one could not be
// opened) its requests in flight are accounted for, and with
// OpenConfig.Redial a replacement takes the lane in the background, with
// bounded backoff, while the timeline goes on. (A Redis Cluster's hash
// slots are package cluster's; they only route requests to the lanes of
// a node, see OpenCluster.)
//
// # Results
//
// A Result is what one test measured: Counts that account for every
// scheduled request (completed, errors, timeouts or unsent), HdrHistograms
// of response, service, send-lag and receive-lag times in nanoseconds, the
// host's hiccups and CPU, and the same cut into Intervals, per command of
// a mix and per cluster node. Intervals, commands, nodes, repeats and
// shards are histograms and counts, so they add up exactly (Result.Merge,
// Pool). A running test is watched through Live (OnStart).
//
// Connections given to a driver must be dialed with conn.Options.Now =
// Now, the clock the scheduler stamps writes with.
package scheduler
