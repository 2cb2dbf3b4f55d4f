package openloop

// Joins: a primary that was not in the first slot map (the cluster scaled
// out) becomes a node of the run, its connections dialed in the background.

import (
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/scheduler"
)

// joined is what the dial of a joining node hands the pacer: its
// connections (nil where a dial failed) and the first dial error.
type joined struct {
	node  int
	conns []*conn.Conn
	err   error
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
	k = cl.addNode(scheduler.Node{Addr: addr, ID: id, Joined: true, Role: scheduler.RolePrimary})
	run.noteJoin(addr)
	run.publishNodes()
	cl.members[k].joining = true
	per := cl.cfg.PerNode
	for range per {
		s := run.addClusterLane(nil, k, addr)
		s.dialing = true // by joinDial, not maintain
	}
	cl.growStores(len(run.lanes))
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
			s := run.lanes[base+i]
			s.dialing = false // maintain redials those that failed
			if c == nil {
				continue
			}
			s.completedAt = s.h.completed.Load()
			c.StartOn(run.cfg.Hub, s.handler())
			s.set(c)
			up++
		}
		ev := scheduler.NodeJoin{Addr: m.Addr, Open: up, Of: len(j.conns)}
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
