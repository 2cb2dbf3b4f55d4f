package openloop

// Dispatch: the pacer queues each routed request on a connection of its
// node with room, or in the node's wait queue, and accounts at the end for
// what still waits.

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

// queueOn queues cmd on lane i and keeps its bytes.
func (p *pacer) queueOn(i int, cmd []byte, intended int64, kind uint32, tries uint8) {
	s := p.run.lanes[i]
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
		c := p.run.lanes[i].c
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
		if p.stamper != nil {
			p.stamper.Stamp(p.next, p.t0+off, now)
		}
		cmd, kind := p.cmds.Next()
		node, _, _ := p.cl.route(cmd, kind, p.next, true)
		node = p.readReplica(node, kind)
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
		p.giveUp(p.run.lanes[rd.lane].node, rd.intended, rd.kind, codeResendUnsent, "a redirected request could not be resent before the end")
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
