// Package scheduler holds what every driver of pacer returns and records
// it with: a Result (Counts that account for every request, latency
// histograms, Intervals, per-command and per-node results, Merge and
// Pool), the Live view of a running test, the Commands a driver sends and
// the recording API the drivers share (Series, HostWatch, CommandStats,
// CommandTally, LiveHooks, error codes). The drivers are packages of their
// own below it in name and above it in imports: scheduler/openloop sends
// each request at its intended instant on a timeline (package timeline:
// uniform, Poisson, stages, a replayed trace, a shard of any of them),
// scheduler/closedloop is redis-benchmark's closed loop; both fill in the
// same facts. It sits between the experiments above it (package
// experiment and its subpackages, the command) and the transport,
// templates, timelines and histograms below it (conn, scenarios,
// timeline, histo); it returns facts and decides nothing: whether a
// Result can be trusted, and whether it meets an SLO, is verdict.Judge's
// call.//
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
