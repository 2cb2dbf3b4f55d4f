// Package timeline holds the planned send instants of a run:
//
//	intended(i) = t0 + Offset(i)
//
// A Timeline gives request i's offset from the run's start t0, computed
// from i alone, never by adding a period to the last instant, so a
// generator that falls behind sends its backlog with each request's own
// intended time and the timeline never shifts. The arrival processes are
// here (Uniform at a Rate, Poisson, Stages and StagedPoisson, a replayed
// Trace), with a Shard of any of them (--shard's K/N, ParseShard) and the
// counting of requests before an instant in bounded time (Count).
//
// It is a package of its own because it is pure arithmetic on request
// indices: it opens no connection and imports no driver. Package
// scheduler's drivers walk a Timeline; experiments and the command build
// one.
package timeline
