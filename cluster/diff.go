package cluster

import "sort"

// Change is slots that changed primary between two slot maps: from the
// node at From to the one at To ("" for nobody), Promoted when To was
// one of From's replicas in the first map (a failover, not a migration).
type Change struct {
	From, To string
	Promoted bool
	// Slots are the ranges, ascending, [lo, hi] inclusive.
	Slots [][2]uint16
}

// Diff returns what changed hands from old to nu, ordered by first slot.
// Primaries are matched by address; nil maps differ in nothing.
func Diff(old, nu *Topology) []Change {
	if old == nil || nu == nil {
		return nil
	}
	addr := func(t *Topology, s uint16) string {
		if o := t.Owner(s); o >= 0 {
			return t.Primaries[o].Addr
		}
		return ""
	}
	byPair := map[[2]string]*Change{}
	var out []*Change
	for s := range uint16(Slots) {
		a, b := addr(old, s), addr(nu, s)
		if a == b {
			continue
		}
		key := [2]string{a, b}
		c := byPair[key]
		if c == nil {
			c = &Change{From: a, To: b}
			if i := old.Index(a); i >= 0 {
				for _, r := range old.Primaries[i].Replicas {
					c.Promoted = c.Promoted || r == b
				}
			}
			byPair[key] = c
			out = append(out, c)
		}
		if n := len(c.Slots); n > 0 && c.Slots[n-1][1] == s-1 {
			c.Slots[n-1][1] = s
		} else {
			c.Slots = append(c.Slots, [2]uint16{s, s})
		}
	}
	if len(out) == 0 {
		return nil
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Slots[0][0] < out[j].Slots[0][0] })
	res := make([]Change, len(out))
	for i, c := range out {
		res[i] = *c
	}
	return res
}
