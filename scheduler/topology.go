package scheduler

import (
	"time"

	"github.com/pacer-load/pacer/events"
)

// Topology is what an open run notes and follows of the topology it
// runs against (OpenConfig embeds it).
type Topology struct {
	// Events makes the run note what it sees happen to the topology:
	// connections to a node lost and back, replies that say a node cannot
	// serve now (LOADING, MASTERDOWN, READONLY, CLUSTERDOWN, TRYAGAIN),
	// MOVED and ASK, a refreshed slot map that differs. The result holds
	// them with their windows (Result.Events).
	Events bool
	// Attach, when set, is given the run's event log when its timeline
	// starts and nil when it ends (each step's in a run of steps), for
	// others to note into it too (a Sentinel follower's failovers).
	Attach func(*events.Log)
	// EventBound is the response time above which a request counts
	// against its event's window (the SLO's tightest latency bound);
	// zero: events.DefaultBound of the run's median response time.
	EventBound time.Duration
	// Reads says, by command kind, which commands only read: their
	// windows are kept apart from the writes'.
	Reads []bool
	// Addr names the server in events (a cluster's nodes have their
	// own addresses).
	Addr string
	// Follow, when set, is a primary that may move (one Sentinel
	// watches): once its epoch passes FollowEpoch (the one the run's
	// first connections were dialed at), each connection is left to end
	// its requests in flight with the former primary, as they end
	// (replies, errors, timeouts), sending nothing more, and a new one is
	// dialed at once with Redial (or RedialGroup) in its place. The
	// timeline goes on meanwhile; what is due waits for a connection as
	// any held-back request does. Cluster runs do not use it.
	Follow      Mover
	FollowEpoch uint64
}

// Mover is a primary that may move: its address now, and how many times
// it moved.
type Mover interface {
	Primary() (addr string, epoch uint64)
}
