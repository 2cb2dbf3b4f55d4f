package scheduler

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
)

// OpenCluster runs an open test against a Redis Cluster: one pool of
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
// its own (Node.Joined).
type OpenCluster struct {
	// Nodes are the primaries; conns[k*PerNode:(k+1)*PerNode] talk to
	// Nodes[k].
	Nodes   []Node
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
	// Dial opens a connection to addr: a replacement for one to a node,
	// or one to a primary that joins. Nil: no redials, and a redirect to
	// a primary not in the first slot map is an error.
	Dial func(ctx context.Context, addr string) (*conn.Conn, error)
	// Refresh fetches the slot map again; called in the background after
	// a redirect, at most one at a time and one per MinRefresh. Nil: the
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

// MinRefresh spaces the slot map refreshes: the redirects of the requests
// already in flight do not each ask again.
const MinRefresh = 100 * time.Millisecond

// Retry backoff after -CLUSTERDOWN or -TRYAGAIN: RetryBackoff, doubling per
// try, at most MaxRetryBackoff.
const (
	RetryBackoff    = 10 * time.Millisecond
	MaxRetryBackoff = 200 * time.Millisecond
)

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
	kindMask   = resendFlag - 1
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
func (c *OpenCluster) validate(n int) error {
	if len(c.Nodes) == 0 || c.PerNode <= 0 || len(c.Nodes)*c.PerNode != n {
		return errors.New("cluster run: want PerNode connections for each node")
	}
	if c.Topology == nil {
		return errors.New("cluster run without a slot map")
	}
	return nil
}

// redirect is a reply handed from a reader to the pacer: the request
// (connection slot, its entry's sequence number on that connection) and
// what the cluster said.
type redirect struct {
	slot     int
	seq      uint64
	intended int64
	kind     uint32
	moved    bool // MOVED (ask, retry false)
	ask      bool
	retry    bool // CLUSTERDOWN, TRYAGAIN
	hslot    uint16
	addr     string
	code     string
}

// redirectQueue carries redirects from the readers to the pacer.
type redirectQueue struct {
	n     atomic.Int64
	mu    sync.Mutex
	items []redirect
	spare []redirect
}

func (q *redirectQueue) push(r redirect) {
	q.mu.Lock()
	q.items = append(q.items, r)
	q.n.Add(1)
	q.mu.Unlock()
}

// take returns the queued redirects; the slice is valid until the next take.
func (q *redirectQueue) take() []redirect {
	if q.n.Load() == 0 {
		return nil
	}
	q.mu.Lock()
	out := q.items
	q.items, q.spare = q.spare[:0], out
	q.n.Add(-int64(len(out)))
	q.mu.Unlock()
	return out
}

// cmdStore keeps the bytes of a connection's commands from their queueing
// until their reply, by sequence number on the connection, so a redirected
// one can be resent. It holds at most limit bytes: a command queued past
// that is not kept (its redirect would be an error). Pacer-owned.
type cmdStore struct {
	limit       int
	buf         []byte
	base        uint64 // absolute offset of buf[0]
	ends        []uint64
	tries       []uint8
	first, next uint64 // sequence numbers held: [first, next)
	start       uint64 // absolute offset where first begins
}

func (s *cmdStore) reset() {
	s.buf, s.base, s.first, s.next, s.start = s.buf[:0], 0, 0, 0, 0
}

func (s *cmdStore) push(cmd []byte, tries uint8) {
	if int(s.next-s.first) == len(s.ends) {
		n := max(2*len(s.ends), 64)
		ends, tr := make([]uint64, n), make([]uint8, n)
		for q := s.first; q < s.next; q++ {
			ends[q%uint64(n)], tr[q%uint64(n)] = s.ends[q%uint64(len(s.ends))], s.tries[q%uint64(len(s.tries))]
		}
		s.ends, s.tries = ends, tr
	}
	if s.limit > 0 && len(s.buf)+len(cmd) > s.limit && s.next > s.first {
		tries = notHeld
	} else {
		s.buf = append(s.buf, cmd...)
	}
	i := s.next % uint64(len(s.ends))
	s.ends[i], s.tries[i] = s.base+uint64(len(s.buf)), tries
	s.next++
}

// notHeld marks a command the store did not keep.
const notHeld = 0xFF

// get returns the bytes and tries of sequence number q (nil if not held).
func (s *cmdStore) get(q uint64) ([]byte, uint8) {
	if q < s.first || q >= s.next {
		return nil, 0
	}
	from := s.start
	if q > s.first {
		from = s.ends[(q-1)%uint64(len(s.ends))]
	}
	to := s.ends[q%uint64(len(s.ends))]
	tries := s.tries[q%uint64(len(s.tries))]
	if tries == notHeld {
		return nil, 0
	}
	return s.buf[from-s.base : to-s.base], tries
}

// release forgets the commands before sequence number q.
func (s *cmdStore) release(q uint64) {
	if q <= s.first {
		return
	}
	q = min(q, s.next)
	s.start = s.ends[(q-1)%uint64(len(s.ends))]
	s.first = q
	if s.first == s.next {
		s.buf, s.base = s.buf[:0], s.start
		return
	}
	if off := s.start - s.base; off > uint64(len(s.buf))/2 && off > 4096 {
		n := copy(s.buf, s.buf[off:])
		s.buf, s.base = s.buf[:n], s.start
	}
}

// waitItem is a request waiting for room on its node.
type waitItem struct {
	intended  int64
	notBefore int64
	kind      uint32
	tries     uint8
	ask       bool
	off, n    int
}

// waitQueue is a node's FIFO of requests waiting for room. Pacer-owned.
type waitQueue struct {
	items []waitItem
	head  int
	buf   []byte
}

func (q *waitQueue) len() int { return len(q.items) - q.head }

func (q *waitQueue) full(n int) bool {
	return q.len() >= maxWaitItems || len(q.buf)+n > maxWaitBytes && q.len() > 0
}

func (q *waitQueue) push(it waitItem, cmd []byte) {
	if q.head > 0 && q.head >= len(q.items)/2 {
		q.compact()
	}
	it.off, it.n = len(q.buf), len(cmd)
	q.buf = append(q.buf, cmd...)
	q.items = append(q.items, it)
}

func (q *waitQueue) front() (*waitItem, []byte) {
	it := &q.items[q.head]
	return it, q.buf[it.off : it.off+it.n]
}

func (q *waitQueue) pop() {
	q.head++
	if q.head == len(q.items) {
		q.items, q.head, q.buf = q.items[:0], 0, q.buf[:0]
	}
}

func (q *waitQueue) compact() {
	rest := q.items[q.head:]
	base := rest[0].off
	n := copy(q.buf, q.buf[base:])
	q.buf = q.buf[:n]
	m := copy(q.items, rest)
	q.items = q.items[:m]
	for i := range q.items {
		q.items[i].off -= base
	}
	q.head = 0
}

// nodeTally is what the pacer counts for a node: requests it gave up on.
type nodeTally struct {
	errors, unsent uint64
}

// member is a node of the run: a primary of the first slot map, or one
// that joined. Pacer-owned.
type member struct {
	Node
	// joining: its first connections are being dialed (its requests
	// wait). down: none of them could be opened; its requests are given
	// up on until a redial of one of its connections succeeds.
	joining, down bool
}

// joined is what the dial of a joining node hands the pacer: its
// connections (nil where a dial failed) and the first dial error.
type joined struct {
	node  int
	conns []*conn.Conn
	err   error
}

// clusterRun is the open run's cluster state. The per-node and
// per-connection lists grow when a node joins: only the pacer reads
// them (readers hold their node's recorder, observers read
// openRun.shown).
type clusterRun struct {
	cfg      *OpenCluster
	maxTries int
	redirs   redirectQueue
	joined   chan joined // a joining node's connections (capacity MaxJoined)

	// Pacer-owned.
	members                      []member
	nodeResp, nodeServ, nodeRecv []*histo.Recorder
	owner                        [cluster.Slots]int16
	stores                       []cmdStore
	heads                        []uint64
	waits                        []waitQueue
	nodes                        []nodeTally
	kinds                        []kindCount // per command: requests the pacer gave up on
	rr                           int         // keyless round robin
	pickRR                       []int       // per node: next connection in rotation
	taken                        []int       // per node: commands its current connection took this wake
	joins                        int         // nodes joined
	// errs mirrors, for observers, the requests the pacer counted as
	// errors.
	errs atomic.Uint64

	fresh      atomic.Pointer[cluster.Topology]
	refreshing atomic.Bool
	refreshCtx context.Context
	stopFetch  context.CancelFunc
	wg         sync.WaitGroup
}

func newClusterRun(ctx context.Context, c *OpenCluster, slots, kinds int) *clusterRun {
	cl := &clusterRun{cfg: c, maxTries: c.MaxTries, joined: make(chan joined, MaxJoined)}
	if cl.maxTries <= 0 {
		cl.maxTries = DefaultClusterTries
	}
	cl.maxTries = min(cl.maxTries, notHeld-1)
	for _, n := range c.Nodes {
		cl.addNode(n)
	}
	cl.growStores(slots)
	if kinds > 0 {
		cl.kinds = make([]kindCount, kinds)
	}
	for i := range cl.owner {
		cl.owner[i] = -1
	}
	cl.apply(c.Topology, nil)
	cl.refreshCtx, cl.stopFetch = context.WithCancel(ctx)
	return cl
}

// addNode adds n's per-node state and returns its index.
func (cl *clusterRun) addNode(n Node) int {
	cl.members = append(cl.members, member{Node: n})
	cl.nodeResp = append(cl.nodeResp, histo.NewRecorder())
	cl.nodeServ = append(cl.nodeServ, histo.NewRecorder())
	cl.nodeRecv = append(cl.nodeRecv, histo.NewRecorder())
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

// addStartSlot adds the slot of the run's i-th starting connection c:
// in a cluster, on node i / PerNode, whose pool it belongs to.
func (run *openRun) addStartSlot(i int, c *conn.Conn) *slot {
	if run.cl == nil {
		s := run.addSlot(c)
		if i < len(run.cfg.Groups) {
			s.group = run.cfg.Groups[i]
		}
		return s
	}
	k := i / run.cl.cfg.PerNode
	return run.addClusterSlot(c, k, run.cl.cfg.Nodes[k].Addr)
}

// addClusterSlot adds a connection slot holding c (nil: none yet) for
// node k at addr.
func (run *openRun) addClusterSlot(c *conn.Conn, k int, addr string) *slot {
	s := run.addSlot(c)
	h := s.h
	h.cl, h.index, h.node = run.cl, len(run.slots)-1, k
	h.nodeResp, h.nodeServ, h.nodeRecv = run.cl.nodeResp[k], run.cl.nodeServ[k], run.cl.nodeRecv[k]
	s.node, s.addr = k, addr
	return s
}

// apply takes the owners of t's slots whose primaries are among the
// nodes. With join, a primary that owns slots and is not yet a node
// joins (join returns its index, -1 if it cannot).
func (cl *clusterRun) apply(t *cluster.Topology, join func(addr, id string) int) {
	idx := make([]int16, len(t.Primaries))
	for i, p := range t.Primaries {
		k := cl.node(p.Addr)
		if k < 0 && join != nil && t.SlotsOf(i) > 0 {
			k = join(p.Addr, p.ID)
		}
		if k >= 0 && cl.members[k].ID == "" {
			cl.members[k].ID = p.ID // a node that joined on a redirect
		}
		idx[i] = int16(k)
	}
	for s := range uint16(cluster.Slots) {
		if o := t.Owner(s); o >= 0 && idx[o] >= 0 {
			cl.owner[s] = idx[o]
		}
	}
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

// join makes the primary at addr, which no node is, a node of the run and
// returns its index: its PerNode connections are dialed in the background
// (joinDial) and its requests wait in its queue until they arrive. It
// returns -1, with the code and text of the error of a request redirected
// there, when the run cannot add it: no Dial, the run is ending, or
// MaxJoined nodes joined already.
func (p *pacer) join(addr, id string) (k int, code, why string) {
	cl, run := p.cl, p.run
	switch {
	case cl.cfg.Dial == nil:
		return -1, codeUnknownTarget, "redirect to " + addr + ", a node not in the slot map"
	case run.redialCtx.Err() != nil:
		return -1, codeResendUnsent, "a redirected request could not be resent before the end"
	case cl.joins >= MaxJoined:
		return -1, codeUnknownTarget, "redirect to " + addr + ", a node not in the slot map, after " + itoa(MaxJoined) + " joined the run"
	}
	cl.joins++
	k = cl.addNode(Node{Addr: addr, ID: id, Joined: true})
	cl.members[k].joining = true
	per := cl.cfg.PerNode
	for range per {
		s := run.addClusterSlot(nil, k, addr)
		s.dialing = true // by joinDial, not maintain
	}
	cl.growStores(len(run.slots))
	p.isDirty = append(p.isDirty, make([]bool, per)...)
	run.joinDial(k, addr, per)
	cl.refresh() // the whole map: its other slots, its ID
	return k, "", ""
}

// joinDial opens the connections of joining node k in the background and
// hands them to the pacer (takeJoined), or closes them once the run has
// finished. A failed first dial ends it: the others would fail alike.
func (run *openRun) joinDial(k int, addr string, per int) {
	cl, ctx := run.cl, run.redialCtx
	go func() {
		j := joined{node: k, conns: make([]*conn.Conn, per)}
		for i := range per {
			select {
			case <-ctx.Done():
			case run.dialing <- struct{}{}:
				c, err := cl.cfg.Dial(ctx, addr)
				<-run.dialing
				j.conns[i] = c
				if err != nil && j.err == nil {
					j.err = err
				}
			}
			if ctx.Err() != nil && j.err == nil {
				j.err = ctx.Err()
			}
			if j.conns[0] == nil {
				break
			}
		}
		run.handoffMu.Lock()
		defer run.handoffMu.Unlock()
		if !run.closed {
			cl.joined <- j // never blocks: one delivery per joined node
			return
		}
		for _, c := range j.conns {
			if c != nil {
				c.Close()
			}
		}
	}()
}

// takeJoined installs the connections of the nodes whose dials ended. A
// node none of whose connections could be opened is down: its waiting
// requests are given up on (CodeJoinFailed) and so are its next ones,
// until maintain's redials (with backoff) reach it.
func (p *pacer) takeJoined() {
	cl, run := p.cl, p.run
	for {
		var j joined
		select {
		case j = <-cl.joined:
		default:
			return
		}
		m := &cl.members[j.node]
		m.joining = false
		base, up := j.node*cl.cfg.PerNode, 0
		for i, c := range j.conns {
			s := run.slots[base+i]
			s.dialing = false // maintain redials those that failed
			if c == nil {
				continue
			}
			s.completedAt = s.h.completed.Load()
			c.Start(s.handler())
			s.set(c)
			up++
		}
		ev := NodeJoin{Addr: m.Addr, Open: up, Of: len(j.conns)}
		if up == 0 && j.err != nil {
			ev.Err = j.err.Error()
		}
		run.joinMu.Lock()
		run.joinLog = append(run.joinLog, ev)
		run.joinMu.Unlock()
		if up > 0 {
			continue
		}
		m.down = true
		code, text := CodeJoinFailed, "cluster node "+m.Addr+" joined the run and could not be reached: "
		if j.err != nil {
			text += j.err.Error()
		}
		if run.redialCtx.Err() != nil {
			code, text = codeResendUnsent, "a redirected request could not be resent before the end"
		} else if run.tally.firstErr == "" {
			run.tally.firstErr = text
		}
		q := &cl.waits[j.node]
		for q.len() > 0 {
			it, _ := q.front()
			p.dropAs(j.node, it, code, text)
			q.pop()
		}
	}
}

// refresh fetches the slot map in the background (one fetch at a time, at
// most one per MinRefresh); the pacer applies it at its next wake.
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
		timer := time.NewTimer(MinRefresh)
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

// spreadSlot is the slot of request i's "{tag}": consecutive indices land
// on slots spread evenly over the whole range.
func spreadSlot(i uint64) uint16 {
	return uint16((i * 0x9E3779B97F4A7C15) >> (64 - 14))
}

// respArg finds argument pos (0: the command's name) of an encoded RESP
// array; ok false when cmd is not one or is too short.
func respArg(cmd []byte, pos int) (from, to int, ok bool) {
	if len(cmd) < 4 || cmd[0] != '*' {
		return 0, 0, false
	}
	i := 1
	n, i, ok := respInt(cmd, i)
	if !ok || pos >= n {
		return 0, 0, false
	}
	for a := 0; a <= pos; a++ {
		if i >= len(cmd) || cmd[i] != '$' {
			return 0, 0, false
		}
		var l int
		if l, i, ok = respInt(cmd, i+1); !ok || i+l+2 > len(cmd) {
			return 0, 0, false
		}
		if a == pos {
			return i, i + l, true
		}
		i += l + 2
	}
	return 0, 0, false
}

// respInt reads a decimal number ending in CRLF at cmd[i:], returning it
// and the index past the CRLF.
func respInt(cmd []byte, i int) (int, int, bool) {
	n, digits := 0, 0
	for ; i < len(cmd) && cmd[i] >= '0' && cmd[i] <= '9'; i++ {
		n = n*10 + int(cmd[i]-'0')
		if digits++; digits > 10 {
			return 0, 0, false
		}
	}
	if digits == 0 || i+1 >= len(cmd) || cmd[i] != '\r' || cmd[i+1] != '\n' {
		return 0, 0, false
	}
	return n, i + 2, true
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
		} else if from, to, ok := respArg(cmd, spec.First); ok {
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
	if len(cmd) < 4 || cmd[0] != '*' {
		return
	}
	n, _, ok := respInt(cmd, 1)
	if !ok {
		return
	}
	last := spec.Last
	if last < 0 {
		last += n
	}
	for a := spec.First; a <= last && a < n; a += spec.Step {
		from, to, ok := respArg(cmd, a)
		if !ok {
			return
		}
		if j := bytes.IndexByte(cmd[from:to], '{'); j >= 0 && from+j+5 <= to {
			cluster.PutTag(cmd[from+j:from+j+5], slot)
		}
	}
}

// Reply side (reader goroutines).

// intercept hands a redirect or retryable error reply to the pacer; it
// reports false for any other reply.
func (cl *clusterRun) intercept(h *replies, e *conn.Entry, r conn.Reply, seq uint64) bool {
	if !r.Err {
		return false
	}
	rd := redirect{slot: h.index, seq: seq, intended: e.Intended, kind: e.Kind}
	if red, ok := cluster.ParseRedirect(r.Text); ok {
		rd.hslot, rd.addr = red.Slot, red.Addr
		if red.Ask {
			rd.ask = true
			h.ask.Add(1)
		} else {
			rd.moved = true
			h.moved.Add(1)
		}
	} else if cluster.Retryable(r.Text) {
		rd.retry = true
		rd.code = string(r.Code())
		h.retries.Add(1)
	} else {
		return false
	}
	// The first send's lag is the generator's; a resend's is the
	// redirect's, and counts in its response time only.
	if e.Kind&resendFlag == 0 && !h.run.warm(e) && h.run.clockOK(e, e.Written) {
		ks, _ := h.run.kindOf(h, e)
		h.run.recordLag(e, ks)
	}
	cl.redirs.push(rd)
	return true
}

// Pacer side.

// wake installs the connections of joined nodes, applies a refreshed slot
// map and handles the redirects the readers handed over, then forgets the
// bytes of the answered commands.
func (p *pacer) clusterWake(el int64) {
	cl := p.cl
	p.takeJoined()
	if t := cl.fresh.Swap(nil); t != nil {
		cl.apply(t, func(addr, id string) int {
			k, _, _ := p.join(addr, id)
			return k
		})
	}
	// Read the heads before taking the redirects: a reader hands its
	// redirect over before it moves its head past it.
	for i, s := range p.run.slots {
		if s.c != nil {
			cl.heads[i] = cl.stores[i].next - uint64(s.c.InFlight())
		}
	}
	p.takeRedirects(el)
	for i, s := range p.run.slots {
		if s.c != nil {
			cl.stores[i].release(cl.heads[i])
		}
	}
}

// takeRedirects resends the redirected requests or gives up on them.
func (p *pacer) takeRedirects(el int64) {
	cl := p.cl
	for _, rd := range cl.redirs.take() {
		cmd, tries := cl.stores[rd.slot].get(rd.seq)
		from := p.run.slots[rd.slot].node
		if cmd == nil {
			p.giveUp(from, rd.intended, rd.kind, codeResendUnsent, "a redirected command was no longer held")
			continue
		}
		tries++
		if int(tries) >= cl.maxTries {
			code := rd.code
			if code == "" {
				code = CodeRedirectLoop
				if rd.ask {
					code = "ASK"
				}
			}
			p.giveUp(from, rd.intended, rd.kind, code, code+": gave up after "+itoa(int(tries))+" sends")
			continue
		}
		kind := rd.kind&^askingFlag | resendFlag
		it := waitItem{intended: rd.intended, kind: kind, tries: tries}
		to := -1
		switch {
		case rd.moved || rd.ask:
			to = cl.node(rd.addr)
			if to < 0 {
				var code, why string
				if to, code, why = p.join(rd.addr, ""); to < 0 {
					p.giveUp(from, rd.intended, rd.kind, code, why)
					cl.refresh()
					continue
				}
			}
			if rd.moved {
				cl.owner[rd.hslot] = int16(to)
				cl.refresh()
			}
			it.ask = rd.ask
		default: // CLUSTERDOWN, TRYAGAIN: back off, refresh, resend to the owner
			cl.refresh()
			it.notBefore = nanotime() + int64(min(RetryBackoff<<(tries-1), MaxRetryBackoff))
			var hasKey bool
			to, _, hasKey = cl.route(cmd, kind, 0, false)
			if !hasKey {
				to = from
			}
		}
		p.dispatch(to, it, cmd, el)
	}
}

// giveUp counts a redirected request the cluster logic cannot deliver as
// an error of node.
func (p *pacer) giveUp(node int, intended int64, kind uint32, code, text string) {
	run := p.run
	t := &run.tally
	if intended < run.warmEnd {
		t.warm.errors++
		return
	}
	t.errors++
	t.codes[code]++
	if t.firstErr == "" {
		t.firstErr = text
	}
	p.cl.nodes[node].errors++
	p.cl.errs.Add(1)
	if k := int(kind & kindMask); k < len(p.cl.kinds) {
		p.cl.kinds[k].errors++
		p.cl.kinds[k].noteError([]byte(code))
		run.kinds[k].errors.Add(1)
	}
}

// dropUnsent counts a first send that waited too long, or found its
// node's queue full, as unsent.
func (p *pacer) dropUnsent(node int, intended int64, kind uint32) {
	if intended-p.t0 < p.warmup {
		p.warmDropped++
		return
	}
	p.dropped++
	p.run.accounted.dropped.Add(1)
	p.cl.nodes[node].unsent++
	if k := int(kind & kindMask); k < len(p.cl.kinds) {
		p.cl.kinds[k].unsent++
	}
}

// drop gives up on a waiting request: unsent if it was never written,
// an error if it was redirected.
func (p *pacer) drop(node int, it *waitItem) {
	p.dropAs(node, it, codeResendUnsent, "a redirected request could not be resent in time")
}

// dropAs is drop with the code and text of the error of a redirected
// request.
func (p *pacer) dropAs(node int, it *waitItem, code, text string) {
	if it.kind&resendFlag != 0 {
		p.giveUp(node, it.intended, it.kind, code, text)
		return
	}
	p.dropUnsent(node, it.intended, it.kind)
}

// dispatch queues a request on a connection of node with room, or in the
// node's wait queue behind the requests already waiting; a joined node
// that could not be reached gives it up at once.
func (p *pacer) dispatch(node int, it waitItem, cmd []byte, el int64) {
	if p.cl.members[node].down {
		if it.kind&resendFlag == 0 {
			p.dropUnsent(node, it.intended, it.kind)
		} else {
			p.giveUp(node, it.intended, it.kind, CodeJoinFailed, "cluster node "+p.cl.members[node].Addr+" joined the run and could not be reached")
		}
		return
	}
	q := &p.cl.waits[node]
	if q.len() == 0 && it.notBefore == 0 && p.sendTo(node, &it, cmd) {
		return
	}
	if q.full(len(cmd)) {
		p.drop(node, &it)
		return
	}
	q.push(it, cmd)
}

// sendTo queues the request on a connection of node with room (two
// entries with ASKING); false if none has.
func (p *pacer) sendTo(node int, it *waitItem, cmd []byte) bool {
	need := 1
	if it.ask {
		need = 2
	}
	i := p.pickIn(node, need)
	if i < 0 {
		return false
	}
	if it.ask {
		p.queueOn(i, askingCmd, it.intended, askingFlag, 0)
	}
	p.queueOn(i, cmd, it.intended, it.kind, it.tries)
	return true
}

// queueOn queues cmd on connection slot i and keeps its bytes.
func (p *pacer) queueOn(i int, cmd []byte, intended int64, kind uint32, tries uint8) {
	s := p.run.slots[i]
	s.c.Queue(cmd, intended, kind)
	p.cl.stores[i].push(cmd, tries)
	if kind&(askingFlag|resendFlag) != 0 {
		s.extra.Add(1)
	} else if intended-p.t0 < p.warmup {
		s.warmQueued.Add(1)
	}
	if !p.isDirty[i] {
		p.isDirty[i] = true
		p.dirty = append(p.dirty, i)
	}
}

// pickIn returns a connection of node with room for need commands: the
// current one while it has taken fewer than batchPerConn in this wake,
// else the next in rotation; -1 if none has.
func (p *pacer) pickIn(node, need int) int {
	per := p.cl.cfg.PerNode
	base := node * per
	cur := &p.cl.pickRR[node]
	for range per + 1 {
		i := base + *cur
		c := p.run.slots[i].c
		if c != nil && !c.Dead() && c.Free() >= need && p.cl.taken[node] < batchPerConn {
			p.cl.taken[node]++
			return i
		}
		p.cl.taken[node] = 0
		if *cur++; *cur == per {
			*cur = 0
		}
	}
	return -1
}

// pump moves waiting requests to connections with room, in order, node by
// node; the expired ones (MaxBacklog) are dropped.
func (p *pacer) pump(el, now int64) {
	maxLate := int64(p.run.cfg.MaxBacklog)
	for k := range p.cl.waits {
		q := &p.cl.waits[k]
		for q.len() > 0 {
			it, cmd := q.front()
			if el-(it.intended-p.t0) > maxLate {
				p.drop(k, it)
				q.pop()
				continue
			}
			if it.notBefore > now || !p.sendTo(k, it, cmd) {
				break
			}
			q.pop()
		}
	}
}

// waiting reports whether requests wait in the nodes' queues or the
// redirect queue.
func (p *pacer) waiting() bool {
	if p.cl.redirs.n.Load() > 0 {
		return true
	}
	for k := range p.cl.waits {
		if p.cl.waits[k].len() > 0 {
			return true
		}
	}
	return false
}

// emitCluster is emit for a cluster: every due request is routed to its
// node and queued on one of its connections, or waits in the node's queue.
func (p *pacer) emitCluster(horizon, el int64) emitOutcome {
	now := p.t0 + el
	p.clusterWake(el)
	for k := range p.cl.taken {
		p.cl.taken[k] = batchPerConn // each wake starts on the next connection
	}
	p.pump(el, now)
	n := 0
	maxLate := int64(p.run.cfg.MaxBacklog)
	for {
		off, due := p.nextDue(horizon, el, maxLate)
		if !due {
			return emitDone
		}
		cmd, kind := p.cmds.Next()
		node, _, _ := p.cl.route(cmd, kind, p.next, true)
		p.dispatch(node, waitItem{intended: p.t0 + off, kind: kind}, cmd, el)
		p.next++
		if n++; n == maxPerWake {
			return emitCapped
		}
	}
}

// abandon accounts, at the end, for the requests still waiting or
// redirected: unsent if never written, errors otherwise. The connections
// are closed: their readers have handed over every redirect.
func (p *pacer) abandon() {
	cl := p.cl
	for _, rd := range cl.redirs.take() {
		p.giveUp(p.run.slots[rd.slot].node, rd.intended, rd.kind, codeResendUnsent, "a redirected request could not be resent before the end")
	}
	for {
		select {
		case j := <-cl.joined: // dialed too late to be used
			for _, c := range j.conns {
				if c != nil {
					c.Close()
				}
			}
			continue
		default:
		}
		break
	}
	for k := range cl.waits {
		q := &cl.waits[k]
		for q.len() > 0 {
			it, _ := q.front()
			p.drop(k, it)
			q.pop()
		}
	}
}

// nodeResults sums the connections' and the pacer's counts per node.
func (run *openRun) nodeResults(p *pacer) []NodeResult {
	cl := p.cl
	out := make([]NodeResult, len(cl.members))
	for k, m := range cl.members {
		out[k].Node = m.Node
		out[k].Connections = cl.cfg.PerNode
		out[k].Response, out[k].Service, out[k].Receive = cl.nodeResp[k].Snapshot(), cl.nodeServ[k].Snapshot(), cl.nodeRecv[k].Snapshot()
		out[k].Counts.Errors = cl.nodes[k].errors
		out[k].Counts.Unsent = cl.nodes[k].unsent
	}
	for _, s := range run.slots {
		r := &out[s.node]
		h := s.h
		r.Counts.Sent += s.sent.Load()
		r.Counts.Completed += h.completed.Load()
		r.Counts.Errors += h.errors.Load() + s.left.errors
		r.Counts.Timeouts += s.left.timeouts
		r.Counts.Unsent += s.left.unsent
		r.Moved += h.moved.Load()
		r.Ask += h.ask.Load()
		r.Redirects += h.moved.Load() + h.ask.Load() + h.retries.Load()
	}
	for k := range out {
		c := &out[k].Counts
		c.Scheduled = c.Sent + c.Unsent
	}
	return out
}

// itoa formats n without fmt, for the rare error texts.
func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			break
		}
	}
	return string(b[i:])
}

// KeyAt returns argument pos (0: the command's name) of an encoded RESP
// command, without copying; ok false for an inline command or one too
// short.
func KeyAt(cmd []byte, pos int) ([]byte, bool) {
	from, to, ok := respArg(cmd, pos)
	if !ok {
		return nil, false
	}
	return cmd[from:to], true
}
