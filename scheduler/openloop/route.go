package openloop

// Reads to replicas (Topology.ReadFrom, not in a cluster): the pacer
// draws each due command before it picks a connection, and a read goes to
// a replica's connection (round the replicas' lanes, a wake's batch to
// one), a write to the primary's. A command whose connections are all
// full or down waits, held, until one can take it: its place on the
// timeline is kept, and what it waited shows as send lag.
//
//	timeline i ──► command (kind) ──read──► replica lanes ─┐ none: prefer-replicas ─► primary lanes
//	                              └─write─► primary lanes ─┴─ none: hold it, blocked

// held is a drawn command that found no connection yet: index is the
// request it is, cmd a copy of its bytes (the buffer reused).
type held struct {
	ok    bool
	index uint64
	kind  uint32
	cmd   []byte
}

// routes are the lanes of each class of a run whose reads go to
// replicas: the primary's and the replicas', by index.
type routes struct {
	primary, replicas []int
	rrPrimary, rrRep  int
	reads             []bool
	mode              ReadFrom
	hold              held
}

// newRoutes sorts the run's lanes, nil when reads stay with the primary.
func newRoutes(run *openRun) *routes {
	cfg := run.cfg
	if cfg.ReadFrom == ReadPrimary || len(cfg.Replicas) == 0 || cfg.Cluster != nil {
		return nil
	}
	r := &routes{reads: cfg.Reads, mode: cfg.ReadFrom}
	for i, s := range run.lanes {
		if s.replica {
			r.replicas = append(r.replicas, i)
		} else {
			r.primary = append(r.primary, i)
		}
	}
	return r
}

// read reports whether kind is a read.
func (r *routes) read(kind uint32) bool {
	k := int(kind & kindMask)
	return k < len(r.reads) && r.reads[k]
}

// emitRouted is emit for a run whose reads go to replicas.
func (p *pacer) emitRouted(horizon, el int64) emitOutcome {
	r := p.routes
	n := 0
	maxLate := int64(p.run.cfg.MaxBacklog)
	for {
		off, due := p.nextDue(horizon, el, maxLate)
		if !due {
			return emitDone
		}
		var cmd []byte
		var kind uint32
		if r.hold.ok && r.hold.index == p.next {
			cmd, kind = r.hold.cmd, r.hold.kind
		} else {
			if p.stamper != nil {
				p.stamper.Stamp(p.next, p.t0+off, p.t0+el)
			}
			cmd, kind = p.cmds.Next()
		}
		r.hold.ok = false
		i := p.pickRoute(kind)
		if i < 0 {
			r.hold = held{ok: true, index: p.next, kind: kind, cmd: append(r.hold.cmd[:0], cmd...)}
			return emitBlocked
		}
		s := p.run.lanes[i]
		if off < p.warmup {
			s.warmQueued.Add(1)
		}
		s.c.Queue(cmd, p.t0+off, kind)
		p.queueWait(s, kind, p.t0+off)
		if !p.isDirty[i] {
			p.isDirty[i] = true
			p.dirty = append(p.dirty, i)
		}
		p.next++
		if n++; n == maxPerWake {
			return emitCapped
		}
	}
}

// pickRoute returns the lane for a command of kind: a replica's for a
// read (or, preferring replicas, the primary's while none can take it),
// the primary's for a write; -1 if none can take it now.
func (p *pacer) pickRoute(kind uint32) int {
	r := p.routes
	if r.read(kind) {
		if i := p.pickAmong(r.replicas, &r.rrRep); i >= 0 || r.mode == ReadReplicas {
			return i
		}
	}
	return p.pickAmong(r.primary, &r.rrPrimary)
}

// pickAmong returns a lane of in with room: the current one while it has
// taken fewer than batchPerConn commands in this wake and is of in, else
// the next in in's rotation (rr); -1 if none has room.
func (p *pacer) pickAmong(in []int, rr *int) int {
	if len(in) == 0 {
		return -1
	}
	if p.taken < batchPerConn && p.curIn(in) && p.usable(p.cur) {
		p.taken++
		return p.cur
	}
	for range in {
		i := in[*rr]
		if *rr++; *rr == len(in) {
			*rr = 0
		}
		if p.usable(i) {
			p.cur, p.taken = i, 1
			return i
		}
	}
	return -1
}

// curIn reports whether the current lane is a lane of in: of the same
// class, which the lane's replica mark says.
func (p *pacer) curIn(in []int) bool {
	if p.cur >= len(p.run.lanes) {
		return false
	}
	return p.run.lanes[p.cur].replica == p.run.lanes[in[0]].replica
}
