package scheduler

import (
	"bytes"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
)

// Routing: which node a command goes to, by the hash slot of its key (its
// "{tag}" filled first), or round-robin for a keyless one.

// spreadSlot is the slot of request i's "{tag}": consecutive indices land
// on slots spread evenly over the whole range.
func spreadSlot(i uint64) uint16 {
	return uint16((i * 0x9E3779B97F4A7C15) >> (64 - 14))
}

// route returns the node of a command of kind, and its slot (hasKey false:
// keyless, sent round-robin). With fill, the "{tag}" of a tagged kind gets
// the tag of request idx's slot first.
func (cl *clusterRun) route(cmd []byte, kind uint32, idx uint64, fill bool) (node int, slot uint16, hasKey bool) {
	k := int(kind & kindMask)
	var spec cluster.KeySpec
	tagged := false
	if k < len(cl.cfg.Keys) {
		spec = cl.cfg.Keys[k]
	}
	if k < len(cl.cfg.Tagged) {
		tagged = cl.cfg.Tagged[k]
	}
	if spec.First > 0 && spec.Step > 0 {
		if tagged && fill {
			slot = spreadSlot(idx)
			putKeyTags(cmd, spec, slot)
			hasKey = true
		} else if from, to, ok := conn.ArgBounds(cmd, spec.First); ok {
			slot, hasKey = cluster.Slot(cmd[from:to]), true
		}
	}
	if hasKey {
		if o := cl.owner[slot]; o >= 0 {
			return int(o), slot, true
		}
	}
	for range cl.members { // skipping joined nodes not (yet) reachable
		node = cl.rr
		if cl.rr++; cl.rr == len(cl.members) {
			cl.rr = 0
		}
		if m := &cl.members[node]; !m.joining && !m.down {
			break
		}
	}
	return node, slot, hasKey
}

// putKeyTags writes slot's tag over the "{tag}" (at the first '{') of every
// key of cmd that spec places.
func putKeyTags(cmd []byte, spec cluster.KeySpec, slot uint16) {
	n, ok := conn.ArgCount(cmd)
	if !ok {
		return
	}
	last := spec.Last
	if last < 0 {
		last += n
	}
	for a := spec.First; a <= last && a < n; a += spec.Step {
		from, to, ok := conn.ArgBounds(cmd, a)
		if !ok {
			return
		}
		if j := bytes.IndexByte(cmd[from:to], '{'); j >= 0 && from+j+5 <= to {
			cluster.PutTag(cmd[from+j:from+j+5], slot)
		}
	}
}
