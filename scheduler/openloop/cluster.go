package openloop

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/scheduler"
)

// Cluster runs an open test against a Redis Cluster: one pool of
// PerNode connections per primary, all fed by the one pacer on the one
// timeline. Each request is routed, once its intended time is fixed, by
// the hash slot of its key to the pool of the slot's primary; a keyless
// one goes round-robin. A node whose connections are full keeps its due
// requests in its own bounded queue (later ones, past MaxBacklog or the
// queue's bound, are unsent): the other nodes keep the timeline.
//
//	timeline i ──► route(cmd) ──► node k ──► k's connection with room
//	                                  └────► k's wait queue (bounded)
//	reader: -MOVED/-ASK/-CLUSTERDOWN/-TRYAGAIN ──► redirect queue ──► pacer
//	        (the pacer resends the stored bytes with the ORIGINAL intended time)
//
// A primary that was not in the first slot map (the cluster scaled out
// during the run) joins when a redirect or a refreshed map names it, up
// to MaxJoined of them: it gets PerNode connections, dialed in the
// background (its requests wait in its queue meanwhile), and a result of
// its own (scheduler.Node.Joined).
type Cluster struct {
	// Nodes are the primaries; conns[k*PerNode:(k+1)*PerNode] talk to
	// Nodes[k].
	Nodes   []scheduler.Node
	PerNode int
	// Topology is the slot map at the start; its primaries are matched to
	// Nodes by address.
	Topology *cluster.Topology
	// Keys says, by command kind, where the command's keys are (a zero
	// KeySpec: keyless, sent round-robin).
	Keys []cluster.KeySpec
	// Tagged says, by kind, that the command's keys hold redis-benchmark's
	// "{tag}": each request then gets the tag of a slot chosen from its
	// index (spread evenly over the slots), in every key.
	Tagged []bool
	// TagByKey says, by tagged kind, that the tag comes from the first
	// key's own name instead (cluster.TagSlot): its keys hold a number
	// (__key__, or __rand_int__ with a keyspace), so each key always gets
	// one tag, and the keys pacer fill --cluster wrote are the keys read.
	// A constant key keeps the spread by index.
	TagByKey []bool
	// Dial opens a connection to addr: a replacement for one to a node,
	// or one to a primary that joins. Nil: no redials, and a redirect to
	// a primary not in the first slot map is an error.
	Dial func(ctx context.Context, addr string) (*conn.Conn, error)
	// Refresh fetches the slot map again; called in the background after
	// a redirect, at most one at a time and one per cluster.MinRefresh. Nil: the
	// map follows the MOVED replies only.
	Refresh func(ctx context.Context) (*cluster.Topology, error)
	// MaxTries bounds the sends of one request (redirects and retries
	// included); the last failure counts as its error. Default
	// DefaultClusterTries.
	MaxTries int
}

// DefaultClusterTries is how many times a request may be sent before a
// redirect or a -CLUSTERDOWN/-TRYAGAIN counts as its error.
const DefaultClusterTries = 5

// The command stores of a run hold at most maxStoreBytes between them
// (each connection at least minStoreBytes): the bytes of the commands in
// flight, kept for a resend.
const (
	maxStoreBytes = 64 << 20
	minStoreBytes = 256 << 10
)

// maxWaitItems and maxWaitBytes bound a node's wait queue.
const (
	maxWaitItems = 1 << 17
	maxWaitBytes = 16 << 20
)

// Kind flags of cluster entries: an ASKING before a resend (its reply is
// skipped), and a resend (its request was counted sent at its first write).
const (
	askingFlag = uint32(1) << 31
	resendFlag = uint32(1) << 30
	kindMask   = waitFlag - 1
)

var askingCmd = []byte("*1\r\n$6\r\nASKING\r\n")

// Codes of requests the cluster logic gives up on.
const (
	CodeRedirectLoop  = "MOVED"
	codeResendUnsent  = "resend unsent"
	codeUnknownTarget = "redirect to an unknown node"
	// CodeJoinFailed: a redirected request waited for a primary that
	// joined during the run, and none of its connections could be opened.
	CodeJoinFailed = "new node unreachable"
)

// MaxJoined bounds the primaries a run adds to those of its first slot
// map.
const MaxJoined = 64

// Validate checks the cluster configuration against n connections.
func (c *Cluster) validate(n int) error {
	if len(c.Nodes) == 0 || c.PerNode <= 0 || len(c.Nodes)*c.PerNode != n {
		return errors.New("cluster run: want PerNode connections for each node")
	}
	if c.Topology == nil {
		return errors.New("cluster run without a slot map")
	}
	return nil
}

// member is a node of the run: a primary of the first slot map, or one
// that joined. Pacer-owned.
type member struct {
	scheduler.Node
	// joining: its first connections are being dialed (its requests
	// wait). down: none of them could be opened; its requests are given
	// up on until a redial of one of its connections succeeds.
	joining, down bool
}

// clusterRun is the open run's cluster state. The per-node and
// per-connection lists grow when a node joins: only the pacer reads
// them (readers hold their node's recorder, observers read
// openRun.shown).
type clusterRun struct {
	cfg      *Cluster
	maxTries int
	redirs   redirectQueue
	joined   chan joined // a joining node's connections (capacity MaxJoined)

	// Pacer-owned.
	members []member
	nodeRec []*scheduler.NodeRecorders
	owner   cluster.Owners
	stores  []cmdStore
	heads   []uint64
	waits   []waitQueue
	nodes   []nodeTally
	kinds   []scheduler.CommandTally // per command: requests the pacer gave up on
	rr      int                      // keyless round robin
	pickRR  []int                    // per node: next connection in rotation
	taken   []int                    // per node: commands its current connection took this wake
	joins   int                      // nodes joined
	// replicas are each primary member's replica members, rrRep their
	// turn (see cluster_replicas.go).
	replicas [][]int
	rrRep    []int
	// last is the slot map applied last, what a refresh is compared with
	// (see cluster_events.go).
	last *cluster.Topology
	// errs mirrors, for observers, the requests the pacer counted as
	// errors.
	errs atomic.Uint64

	fresh      atomic.Pointer[cluster.Topology]
	refreshing atomic.Bool
	refreshCtx context.Context
	stopFetch  context.CancelFunc
	wg         sync.WaitGroup
}

func newClusterRun(ctx context.Context, c *Cluster, lanes, kinds int) *clusterRun {
	cl := &clusterRun{cfg: c, maxTries: c.MaxTries, joined: make(chan joined, MaxJoined)}
	if cl.maxTries <= 0 {
		cl.maxTries = DefaultClusterTries
	}
	cl.maxTries = min(cl.maxTries, notHeld-1)
	for _, n := range c.Nodes {
		cl.addNode(n)
	}
	cl.growStores(lanes)
	if kinds > 0 {
		cl.kinds = make([]scheduler.CommandTally, kinds)
	}
	cl.owner = *cluster.NewOwners()
	cl.linkReplicas()
	cl.apply(c.Topology, nil)
	cl.last = c.Topology
	cl.refreshCtx, cl.stopFetch = context.WithCancel(ctx)
	return cl
}

// addNode adds n's per-node state and returns its index.
func (cl *clusterRun) addNode(n scheduler.Node) int {
	cl.members = append(cl.members, member{Node: n})
	cl.nodeRec = append(cl.nodeRec, &scheduler.NodeRecorders{})
	cl.waits = append(cl.waits, waitQueue{})
	cl.nodes = append(cl.nodes, nodeTally{})
	cl.pickRR = append(cl.pickRR, 0)
	cl.taken = append(cl.taken, batchPerConn)
	return len(cl.members) - 1
}

// growStores gives each of n connections a command store, all of them
// sharing maxStoreBytes.
func (cl *clusterRun) growStores(n int) {
	for len(cl.stores) < n {
		cl.stores = append(cl.stores, cmdStore{})
		cl.heads = append(cl.heads, 0)
	}
	for i := range cl.stores {
		cl.stores[i].limit = max(minStoreBytes, maxStoreBytes/max(n, 1))
	}
}

// addStartLane adds the lane of the run's i-th starting connection c:
// in a cluster, on node i / PerNode, whose pool it belongs to.
func (run *openRun) addStartLane(i int, c *conn.Conn) *lane {
	if run.cl == nil {
		s := run.addLane(c)
		if i < len(run.cfg.Groups) {
			s.group = run.cfg.Groups[i]
		}
		run.replicaLane(s, i)
		return s
	}
	k := i / run.cl.cfg.PerNode
	return run.addClusterLane(c, k, run.cl.cfg.Nodes[k].Addr)
}

// addClusterLane adds a lane holding c (nil: none yet) for
// node k at addr.
func (run *openRun) addClusterLane(c *conn.Conn, k int, addr string) *lane {
	s := run.addLane(c)
	h := s.h
	h.cl, h.index, h.node = run.cl, len(run.lanes)-1, k
	h.nodeRec = run.cl.nodeRec[k]
	s.node, s.addr = k, addr
	return s
}

// apply takes the owners of t's slots whose primaries are among the
// nodes. With join, a primary that owns slots and is not yet a node
// joins (join returns its index, -1 if it cannot).
func (cl *clusterRun) apply(t *cluster.Topology, join func(addr, id string) int) {
	owns := t.Owning()
	idx := make([]int, len(t.Primaries))
	for i, p := range t.Primaries {
		k := cl.node(p.Addr)
		if k < 0 && join != nil && owns[i] {
			k = join(p.Addr, p.ID)
		}
		if k >= 0 && cl.members[k].ID == "" {
			cl.members[k].ID = p.ID // a node that joined on a redirect
		}
		if k >= 0 && owns[i] && cl.members[k].Role == scheduler.RoleReplica {
			cl.members[k].Role = scheduler.RolePrimary // a replica that took over
		}
		idx[i] = k
	}
	cl.owner.Take(t, idx)
	addrs, reps := make([]string, len(t.Primaries)), make([][]string, len(t.Primaries))
	for i, p := range t.Primaries {
		addrs[i], reps[i] = p.Addr, p.Replicas
	}
	cl.relinkReplicas(addrs, reps)
}

// node returns the index of the node at addr, -1 if none.
func (cl *clusterRun) node(addr string) int {
	for k := range cl.members {
		if cl.members[k].Addr == addr {
			return k
		}
	}
	return -1
}

// refresh fetches the slot map in the background (one fetch at a time, at
// most one per cluster.MinRefresh); the pacer applies it at its next wake.
func (cl *clusterRun) refresh() {
	if cl.cfg.Refresh == nil || !cl.refreshing.CompareAndSwap(false, true) {
		return
	}
	cl.wg.Add(1)
	go func() {
		defer cl.wg.Done()
		defer cl.refreshing.Store(false)
		t, err := cl.cfg.Refresh(cl.refreshCtx)
		if err == nil && t != nil {
			cl.fresh.Store(t)
		}
		timer := time.NewTimer(cluster.MinRefresh)
		defer timer.Stop()
		select {
		case <-cl.refreshCtx.Done():
		case <-timer.C:
		}
	}()
}

// stop ends the refreshes and waits for them.
func (cl *clusterRun) stop() {
	cl.stopFetch()
	cl.wg.Wait()
}
