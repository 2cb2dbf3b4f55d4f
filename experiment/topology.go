package experiment

import "github.com/pacer-load/pacer/scheduler/openloop"

// Topology fills in what an open run notes and follows of the topology
// (cfg.Topology, but its EventBound, Reads, ReadFrom and replicas): its
// events, the server's address (addr: the primary its connections were
// dialed to, a cluster's seed) and, when sentinels name the primary, the
// primary to follow from the failover count its connections were dialed
// at (epoch).
func (e *Env) Topology(cfg *openloop.Config, addr string, epoch uint64) {
	cfg.Events = true
	cfg.Addr = addr
	if f := e.Target.Follower(); f != nil && !e.Target.Cluster {
		cfg.Follow, cfg.FollowEpoch, cfg.Attach = f, epoch, f.SetLog
	}
}
