package cluster

// Partition splits a stream of commands between the primaries of a
// topology by the slot of each command's keys (found at Spec): a fill
// plans with it which primary writes which keys, and each primary's
// connections keep their own. With Tagged the keys hold "{tag}", which
// Slot writes first, the tag of each key's own name (TagSlot), as an open
// run's tests write theirs: the keys written are the keys the tests read.
type Partition struct {
	Topology *Topology
	Spec     KeySpec
	Tagged   bool
}

// Slot returns the slot of cmd's keys, first writing their tag when
// Tagged; ok is false when cmd has no key where Spec expects it.
func (p *Partition) Slot(cmd []byte) (uint16, bool) {
	if !p.Tagged {
		return EncodedSlot(cmd, p.Spec)
	}
	slot, ok := EncodedTagSlot(cmd, p.Spec)
	if ok {
		PutKeyTags(cmd, p.Spec, slot)
	}
	return slot, ok
}

// Owner returns the index in Topology.Primaries of the primary that owns
// cmd's slot (-1: none does) and the slot, as Slot finds it; ok is false
// when cmd has no key where Spec expects it.
func (p *Partition) Owner(cmd []byte) (owner int, slot uint16, ok bool) {
	slot, ok = p.Slot(cmd)
	if !ok {
		return -1, 0, false
	}
	return p.Topology.Owner(slot), slot, true
}
