package openloop

import (
	"context"
	"errors"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/events"
	"github.com/pacer-load/pacer/scheduler"
)

// Topology is what an open run notes and follows of the topology it
// runs against (Config embeds it).
type Topology struct {
	// Events makes the run note what it sees happen to the topology:
	// connections to a node lost and back, replies that say a node cannot
	// serve now (LOADING, MASTERDOWN, READONLY, CLUSTERDOWN, TRYAGAIN),
	// MOVED and ASK, a refreshed slot map that differs. The result holds
	// them with their windows (scheduler.Result.Events).
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
	Follow      scheduler.Mover
	FollowEpoch uint64
	// ReadFrom says where the commands Reads marks go: the primary (the
	// zero value), the replicas, or the replicas while one can take them.
	ReadFrom ReadFrom
	// Replicas are a primary's replicas that reads go to (not in a
	// cluster: Cluster has its own): the run's connections after the
	// primary's are PerReplica to each, in order; DialReplica replaces
	// one. The result then holds a row per node, with its role.
	Replicas    []string
	PerReplica  int
	DialReplica func(ctx context.Context, addr string) (*conn.Conn, error)
	// Wait, when set, sends WAIT after every write (see scheduler.Wait); the result
	// holds what they measured (scheduler.Result.Wait).
	Wait *scheduler.Wait
	// Begin, when set, is called with the timeline's t0 when it starts
	// (on the pacer's thread: it must return at once).
	Begin func(t0 int64)
}

// ReadFrom is where reads go.
type ReadFrom int

const (
	// ReadPrimary sends every command to the primary.
	ReadPrimary ReadFrom = iota
	// ReadReplicas sends reads to the replicas only: while none can take
	// one, it waits, as any held-back request.
	ReadReplicas
	// PreferReplicas sends reads to the replicas, and to the primary
	// while none can take one.
	PreferReplicas
)

// ParseReadFrom reads --read-from: primary, replicas or prefer-replicas.
func ParseReadFrom(s string) (ReadFrom, bool) {
	switch s {
	case "primary":
		return ReadPrimary, true
	case "replicas":
		return ReadReplicas, true
	case "prefer-replicas":
		return PreferReplicas, true
	}
	return 0, false
}

// String is the flag's word for r.
func (r ReadFrom) String() string {
	return [...]string{"primary", "replicas", "prefer-replicas"}[r]
}

// validateReplicas checks the replicas' connections among n.
func (c *Config) validateReplicas(n int) error {
	switch {
	case len(c.Replicas) == 0:
		return nil
	case c.Cluster != nil:
		return errors.New("open run: a cluster's replicas come with its slot map, not Replicas")
	case len(c.Groups) > 0:
		return errors.New("open run: connection groups and replicas do not go together")
	case c.PerReplica <= 0 || c.PerReplica*len(c.Replicas) >= n || c.DialReplica == nil:
		return errors.New("open run: want PerReplica connections to each replica after the primary's, and DialReplica")
	}
	return nil
}
