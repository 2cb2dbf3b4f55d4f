// Package closedloop is the closed-loop driver, redis-benchmark's model:
// every connection keeps one batch of Pipeline commands in flight and
// sends the next when the last reply of the previous one has arrived, so
// latency counts from the actual send (Run, Config). It may be throttled
// to a rate (the send lag then shows how far it fell behind), run against
// a Redis Cluster the way redis-benchmark --cluster does (Cluster), and
// follow a primary that moves.
//
// It is a package of its own, beside the open driver, because the two
// share only the facts they return and the way those are recorded:
// package scheduler's Result, Counts, Live, interval Series, HostWatch and
// per-command stats, which this package fills in and decides nothing with.
package closedloop
