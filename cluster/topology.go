package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/conn"
)

// Node is one primary and its replicas' addresses.
type Node struct {
	ID       string
	Addr     string   // host:port as the cluster announces it
	Replicas []string // host:port
}

// MaxPrimaries bounds the primaries a slot map may list: Redis Cluster is
// meant for at most about 1,000 nodes, and each primary a run talks to
// costs it connections and histograms. A map listing more is refused.
const MaxPrimaries = 1000

// Topology maps every slot to a primary.
type Topology struct {
	Primaries []Node
	// owner is the index into Primaries of each slot's primary, -1 when
	// unassigned: an int32, as an int16 would wrap past 32,767 primaries
	// (a map that lists tens of thousands of primaries without slots before
	// the ones that serve them).
	owner [Slots]int32
}

// NewTopology returns a topology of primaries that owns no slot yet (see
// Assign): for tests and for callers that learn the map otherwise.
func NewTopology(primaries []Node) *Topology {
	t := &Topology{Primaries: primaries}
	for i := range t.owner {
		t.owner[i] = -1
	}
	return t
}

// Assign gives the slots lo..hi (inclusive) to primary i (-1: to nobody).
func (t *Topology) Assign(lo, hi uint16, i int) {
	for s := int(lo); s <= int(hi) && s < Slots; s++ {
		t.owner[s] = int32(i)
	}
}

// Owner returns the index in Primaries of the slot's primary, -1 when the
// slot is unassigned.
func (t *Topology) Owner(slot uint16) int { return int(t.owner[slot&(Slots-1)]) }

// Index returns the index of the primary at addr, -1 if none is.
func (t *Topology) Index(addr string) int {
	for i, n := range t.Primaries {
		if n.Addr == addr {
			return i
		}
	}
	return -1
}

// Covered reports whether every slot has an owner.
func (t *Topology) Covered() bool {
	for _, o := range t.owner {
		if o < 0 {
			return false
		}
	}
	return true
}

// SlotsOf returns how many slots primary i owns.
func (t *Topology) SlotsOf(i int) int {
	n := 0
	for _, o := range t.owner {
		if int(o) == i {
			n++
		}
	}
	return n
}

// Discover asks the seed (o.Addr, with o's auth and TLS) for the topology:
// CLUSTER SHARDS, falling back to CLUSTER SLOTS when the server does not
// know SHARDS (Redis < 7). A server that is not in cluster mode gives an
// error saying so ("127.0.0.1:6379 is not a cluster: ...").
func Discover(ctx context.Context, o conn.Options) (*Topology, error) {
	seedHost, _, _ := net.SplitHostPort(o.Addr)
	answers, err := conn.DoAll(ctx, o, []string{"CLUSTER", "SHARDS"})
	if err != nil {
		return nil, fmt.Errorf("cluster topology from %s: %w", o.Addr, err)
	}
	if answers[0].Err == nil {
		t, err := parseShards(answers[0].Value, seedHost, o.TLS != nil)
		if err != nil {
			return nil, fmt.Errorf("CLUSTER SHARDS from %s: %w", o.Addr, err)
		}
		t.bySlot()
		return t, nil
	}
	shardsErr := answers[0].Err
	answers, err = conn.DoAll(ctx, o, []string{"CLUSTER", "SLOTS"})
	if err != nil {
		return nil, fmt.Errorf("cluster topology from %s: %w", o.Addr, err)
	}
	if answers[0].Err != nil {
		if notCluster(shardsErr) || notCluster(answers[0].Err) {
			return nil, fmt.Errorf("%s is not a cluster: %v", o.Addr, answers[0].Err)
		}
		return nil, fmt.Errorf("cluster topology from %s: CLUSTER SLOTS: %v", o.Addr, answers[0].Err)
	}
	t, err := parseSlots(answers[0].Value, seedHost)
	if err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS from %s: %w", o.Addr, err)
	}
	t.bySlot()
	return t, nil
}

// bySlot orders the primaries by the first slot each serves (those
// without slots last, in the order announced), so every listing of them
// (a run's nodes, the per-node table, redis-benchmark's header) comes in
// one order whichever seed was asked.
func (t *Topology) bySlot() {
	first := make([]int, len(t.Primaries))
	for i := range first {
		first[i] = Slots
	}
	for s := Slots - 1; s >= 0; s-- {
		if o := t.owner[s]; o >= 0 {
			first[o] = s
		}
	}
	order := make([]int, len(t.Primaries)) // new index -> old
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return first[a] - first[b] })
	moved := make([]int32, len(order)) // old index -> new
	primaries := make([]Node, len(order))
	for k, i := range order {
		moved[i] = int32(k)
		primaries[k] = t.Primaries[i]
	}
	t.Primaries = primaries
	for s, o := range t.owner {
		if o >= 0 {
			t.owner[s] = moved[o]
		}
	}
}

// tooMany refuses a map of more than MaxPrimaries primaries.
func tooMany(n int) error {
	return fmt.Errorf("the cluster lists %d primaries, more than the %d pacer supports", n, MaxPrimaries)
}

// notCluster recognises the answers of a server without cluster mode:
// Redis says "cluster support disabled", others refuse CLUSTER itself.
func notCluster(err error) bool {
	var se *conn.ServerError
	if !errors.As(err, &se) {
		return false
	}
	m := strings.ToLower(se.Msg)
	return strings.Contains(m, "cluster support disabled") || strings.Contains(m, "unknown command") ||
		strings.Contains(m, "not enabled") || strings.Contains(m, "cluster mode")
}

// fields reads a reply that is a map (RESP3) or a flat list of name, value
// pairs (RESP2).
func fields(v conn.Value) map[string]conn.Value {
	m := map[string]conn.Value{}
	for i := 0; i+1 < len(v.Elems); i += 2 {
		m[strings.ToLower(v.Elems[i].Str)] = v.Elems[i+1]
	}
	return m
}

// endpoint joins host and port, standing in the seed's host for an unknown
// one ("", "?"), as clients do. A port outside 1–65535 is an error: the
// node could not be dialled (port 0 would even reach whatever the system
// picks).
func endpoint(host string, port int64, seedHost string) (string, error) {
	if port < 1 || port > 65535 {
		return "", fmt.Errorf("node %q has port %d, not in 1-65535", host, port)
	}
	if host == "" || host == "?" {
		host = seedHost
	}
	return net.JoinHostPort(host, strconv.FormatInt(port, 10)), nil
}

func slotRange(lo, hi conn.Value) (uint16, uint16, error) {
	if lo.Kind != ':' || hi.Kind != ':' || lo.Int < 0 || hi.Int >= Slots || lo.Int > hi.Int {
		return 0, 0, fmt.Errorf("bad slot range %v-%v", lo.Int, hi.Int)
	}
	return uint16(lo.Int), uint16(hi.Int), nil
}

// parseShards reads CLUSTER SHARDS: per shard a map with "slots" (a flat
// list of range bounds) and "nodes" (maps with id, endpoint, ip, port,
// tls-port, role, health).
func parseShards(v conn.Value, seedHost string, useTLS bool) (*Topology, error) {
	t := NewTopology(nil)
	index := map[string]int{} // a primary's index by address
	for _, sh := range v.Elems {
		f := fields(sh)
		var primary *Node
		var replicas []string
		for _, nv := range f["nodes"].Elems {
			n := fields(nv)
			port := n["port"].Int
			if p, ok := n["tls-port"]; ok && (useTLS || port == 0) {
				port = p.Int
			}
			host := n["endpoint"].Str
			if host == "" || host == "?" {
				host = n["ip"].Str
			}
			addr, err := endpoint(host, port, seedHost)
			if err != nil {
				if h := n["health"].Str; h != "" && h != "online" {
					continue // a failed or loading node, not dialled
				}
				return nil, err
			}
			if n["role"].Str == "master" {
				if primary != nil && n["health"].Str != "online" {
					continue // a failed former primary beside the new one
				}
				primary = &Node{ID: n["id"].Str, Addr: addr}
			} else {
				replicas = append(replicas, addr)
			}
		}
		slots := f["slots"].Elems
		if primary == nil {
			if len(slots) > 0 {
				return nil, errors.New("a shard serving slots has no primary")
			}
			continue
		}
		// A primary listed by two shards (a map no real cluster gives) is
		// one node serving both shards' slots, not two.
		i, ok := index[primary.Addr]
		if !ok {
			i = len(t.Primaries)
			if i == MaxPrimaries {
				return nil, tooMany(countShardPrimaries(v))
			}
			index[primary.Addr] = i
			primary.Replicas = replicas
			t.Primaries = append(t.Primaries, *primary)
		}
		if len(slots)%2 != 0 {
			return nil, errors.New("odd number of slot bounds")
		}
		for k := 0; k < len(slots); k += 2 {
			lo, hi, err := slotRange(slots[k], slots[k+1])
			if err != nil {
				return nil, err
			}
			t.Assign(lo, hi, i)
		}
	}
	if len(t.Primaries) == 0 {
		return nil, errors.New("no primary")
	}
	return t, nil
}

// countShardPrimaries counts the shards of a CLUSTER SHARDS reply that
// have a primary, for the error that refuses too many (an estimate: a
// primary listed twice counts twice).
func countShardPrimaries(v conn.Value) int {
	n := 0
	for _, sh := range v.Elems {
		for _, nv := range fields(sh)["nodes"].Elems {
			if fields(nv)["role"].Str == "master" {
				n++
				break
			}
		}
	}
	return n
}

// parseSlots reads CLUSTER SLOTS: per range [start, end, primary,
// replicas...], each node [host, port, id, ...].
func parseSlots(v conn.Value, seedHost string) (*Topology, error) {
	t := NewTopology(nil)
	index := map[string]int{} // a primary's index by address
	for _, r := range v.Elems {
		if len(r.Elems) < 3 {
			return nil, errors.New("a slot range without a node")
		}
		lo, hi, err := slotRange(r.Elems[0], r.Elems[1])
		if err != nil {
			return nil, err
		}
		addrOf := func(n conn.Value) (string, string, error) {
			if len(n.Elems) < 2 || n.Elems[1].Kind != ':' {
				return "", "", errors.New("a node without a port")
			}
			id := ""
			if len(n.Elems) > 2 {
				id = n.Elems[2].Str
			}
			addr, err := endpoint(n.Elems[0].Str, n.Elems[1].Int, seedHost)
			return addr, id, err
		}
		addr, id, err := addrOf(r.Elems[2])
		if err != nil {
			return nil, err
		}
		i, ok := index[addr]
		if !ok {
			i = len(t.Primaries)
			if i == MaxPrimaries {
				return nil, fmt.Errorf("the cluster lists more than the %d primaries pacer supports", MaxPrimaries)
			}
			index[addr] = i
			n := Node{ID: id, Addr: addr}
			for _, rv := range r.Elems[3:] {
				ra, _, err := addrOf(rv)
				if err != nil {
					return nil, err
				}
				n.Replicas = append(n.Replicas, ra)
			}
			t.Primaries = append(t.Primaries, n)
		}
		t.Assign(lo, hi, i)
	}
	if len(t.Primaries) == 0 {
		return nil, errors.New("no slot is served")
	}
	return t, nil
}
