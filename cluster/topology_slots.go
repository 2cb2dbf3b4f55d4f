package cluster

// SlotList returns the slots primary i owns, in ascending order (nil: none).
func (t *Topology) SlotList(i int) []uint16 {
	var out []uint16
	for s := range uint16(Slots) {
		if t.Owner(s) == i {
			out = append(out, s)
		}
	}
	return out
}

// Refreshed is the slot lists of the primaries a client knows (addrs[k],
// whose list was old[k]) after a fresh map top: each known primary's slots
// in top; a primary top does not list, or that owns no slot in it, keeps
// its old list (its requests go on being redirected, and are counted so).
// A primary that joined is not among them: the client has no connection
// to it. old is not changed.
func Refreshed(old [][]uint16, addrs []string, top *Topology) [][]uint16 {
	lists := make([][]uint16, len(addrs))
	for k, addr := range addrs {
		lists[k] = old[k]
		if i := top.Index(addr); i >= 0 && top.SlotsOf(i) > 0 {
			lists[k] = top.SlotList(i)
		}
	}
	return lists
}
