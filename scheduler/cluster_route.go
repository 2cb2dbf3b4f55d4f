package scheduler

import (
	"github.com/pacer-load/pacer/cluster"
)

// Routing: which node a command goes to, by the hash slot of its key (its
// "{tag}" filled first), or round-robin for a keyless one.

// spreadSlot is the slot of request i's "{tag}": consecutive indices land
// on slots spread evenly over the whole range.
func spreadSlot(i uint64) uint16 {
	return uint16((i * 0x9E3779B97F4A7C15) >> (64 - 14))
}

// route returns the node of a command of kind, and its slot (hasKey false:
// keyless, sent round-robin). With fill, the "{tag}" of a tagged kind is
// filled first: with the tag its first key's name gives it (TagByKey), or
// else the tag of request idx's slot.
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
	switch {
	case tagged && fill && byKey:
		if slot, hasKey = cluster.EncodedTagSlot(cmd, spec); hasKey {
			cluster.PutKeyTags(cmd, spec, slot)
		}
	case tagged && fill && spec.First > 0 && spec.Step > 0:
		slot, hasKey = spreadSlot(idx), true
		cluster.PutKeyTags(cmd, spec, slot)
	default:
		slot, hasKey = cluster.EncodedSlot(cmd, spec)
	}
	if hasKey {
		if o := cl.owner[slot]; o >= 0 {
			return int(o), slot, true
		}
	}
	for range cl.members { // skipping replicas, and joined nodes not (yet) reachable
		node = cl.rr
		if cl.rr++; cl.rr == len(cl.members) {
			cl.rr = 0
		}
		if m := &cl.members[node]; !m.joining && !m.down && m.Role != RoleReplica {
			break
		}
	}
	return node, slot, hasKey
}
