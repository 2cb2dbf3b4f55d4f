// Package openloop is the open-model driver: it sends each request at its
// intended instant on a timeline (package timeline), whatever the replies
// do, and measures its response time from that instant (Run, RunSteps,
// Config), so a server that stalls shows in the latency instead of
// slowing the load down (no coordinated omission). It also routes a Redis
// Cluster's requests to their nodes (Cluster), follows a primary that
// moves, reads from replicas and sends WAIT after writes.
//
// It is a package of its own, beside the closed loop
// (scheduler/closedloop), because the two share only the facts they
// return and the way those are recorded: package scheduler's Result,
// Counts, Live, interval Series, HostWatch and per-command stats, which
// this package fills in and decides nothing with.
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
// Config.Redial a replacement takes the lane in the background, with
// bounded backoff, while the timeline goes on. (A Redis Cluster's hash
// slots are package cluster's; they only route requests to the lanes of
// a node, see Cluster.)
package openloop
