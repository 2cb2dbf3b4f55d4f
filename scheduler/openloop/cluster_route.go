package openloop

import (
	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/scheduler"
)

// Routing: which node a command goes to, by the hash slot of its key (its
// "{tag}" filled first), or round-robin for a keyless one.

// route returns the node of a command of kind, and its slot (hasKey false:
// keyless, sent round-robin). With fill, the "{tag}" of a tagged kind is
// filled first (cluster.RouteSlot).
func (cl *clusterRun) route(cmd []byte, kind uint32, idx uint64, fill bool) (node int, slot uint16, hasKey bool) {
	k := int(kind & kindMask)
	var spec cluster.KeySpec
	tagged, byKey := false, false
	if k < len(cl.cfg.Keys) {
		spec = cl.cfg.Keys[k]
	}
	if k < len(cl.cfg.Tagged) {
		tagged = cl.cfg.Tagged[k]
	}
	if k < len(cl.cfg.TagByKey) {
		byKey = cl.cfg.TagByKey[k]
	}
	slot, hasKey = cluster.RouteSlot(cmd, spec, tagged && fill, byKey, idx)
	if hasKey {
		if o, ok := cl.owner.Owner(slot); ok {
			return o, slot, true
		}
	}
	// Skipping replicas, and joined nodes not (yet) reachable.
	node, tried, _ := cluster.InTurn(len(cl.members), cl.rr, func(i int) bool {
		m := &cl.members[i]
		return !m.joining && !m.down && m.Role != scheduler.RoleReplica
	})
	cl.rr = (cl.rr + tried) % len(cl.members)
	return node, slot, hasKey
}
