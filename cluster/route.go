package cluster

// Routing decisions of a run against a cluster, independent of the
// driver's queues and connections: which slot a command belongs to
// (filling redis-benchmark's "{tag}" first), which of the run's nodes owns
// a slot, and whose turn it is among nodes that may take a request.

// SpreadSlot is the slot of request i's "{tag}": consecutive indices land
// on slots spread evenly over the whole range.
func SpreadSlot(i uint64) uint16 {
	return uint16((i * 0x9E3779B97F4A7C15) >> (64 - 14))
}

// RouteSlot returns the slot an encoded command goes to, and false when it
// has no key where spec places them (a keyless command, sent round-robin).
// With tag, the command's keys hold a "{tag}" to fill first, and RouteSlot
// writes it in place, in every key: with byKey, the tag its first key's
// name gives it (TagSlot), so each key always gets one tag; else, when
// spec places keys, the tag of request idx's slot (SpreadSlot). A command
// whose tags are filled already (a resend) is routed with tag false.
func RouteSlot(cmd []byte, spec KeySpec, tag, byKey bool, idx uint64) (slot uint16, hasKey bool) {
	switch {
	case tag && byKey:
		if slot, hasKey = EncodedTagSlot(cmd, spec); hasKey {
			PutKeyTags(cmd, spec, slot)
		}
	case tag && spec.First > 0 && spec.Step > 0:
		slot, hasKey = SpreadSlot(idx), true
		PutKeyTags(cmd, spec, slot)
	default:
		slot, hasKey = EncodedSlot(cmd, spec)
	}
	return slot, hasKey
}

// Owners maps every slot to the run's node that owns it, by the run's own
// node numbers (not a Topology's primaries'), -1 when none does. A MOVED
// reply moves one slot (Set); a refreshed slot map moves them all (Take).
type Owners [Slots]int32

// NewOwners returns an Owners in which no node owns any slot.
func NewOwners() *Owners {
	o := new(Owners)
	for i := range o {
		o[i] = -1
	}
	return o
}

// Owner returns the node that owns slot, and false when none does.
func (o *Owners) Owner(slot uint16) (int, bool) {
	n := o[slot&(Slots-1)]
	return int(n), n >= 0
}

// Set gives slot to node (a MOVED reply's news).
func (o *Owners) Set(slot uint16, node int) { o[slot&(Slots-1)] = int32(node) }

// Take gives every slot t assigns to the node that node numbers t's
// primary by (node[i] for t.Primaries[i], -1: none of the run's; such
// slots keep the owner they had).
func (o *Owners) Take(t *Topology, node []int) {
	for s := range uint16(Slots) {
		if p := t.Owner(s); p >= 0 && p < len(node) && node[p] >= 0 {
			o[s] = int32(node[p])
		}
	}
}

// Owning reports, for each of t's primaries, whether it owns a slot: a
// primary listed without slots is no owner, and is not joined by a run
// for the map's sake.
func (t *Topology) Owning() []bool {
	owns := make([]bool, len(t.Primaries))
	for s := range uint16(Slots) {
		if o := t.Owner(s); o >= 0 {
			owns[o] = true
		}
	}
	return owns
}

// InTurn returns the first of n candidates in turn, from from on and
// round (from+k mod n), that ok accepts, and how many it tried; found is
// false when none does (i is then the last one tried). The caller moves
// its turn on by tried. Keyless commands go round the primaries, reads
// round a primary's replicas, by it.
func InTurn(n, from int, ok func(i int) bool) (i, tried int, found bool) {
	for k := range n {
		i = (from + k) % n
		if ok(i) {
			return i, k + 1, true
		}
	}
	return i, n, false
}
