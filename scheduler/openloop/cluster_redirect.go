package openloop

import (
	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/scheduler"
)

// Redirects of an open cluster run: a reader hands each -MOVED, -ASK,
// -CLUSTERDOWN or -TRYAGAIN reply to the pacer (intercept, on the reader's
// goroutine); the pacer resends the request's stored bytes with its
// original intended time, or gives up on it and counts it (takeRedirects,
// giveUp).

// intercept hands a redirect or retryable error reply to the pacer; it
// reports false for any other reply.
func (cl *clusterRun) intercept(h *replies, e *conn.Entry, r conn.Reply, seq uint64) bool {
	if !r.Err {
		return false
	}
	next := cluster.Follow(r.Text, r.Code())
	if next.Next == cluster.Answered {
		return false
	}
	rd := redirect{lane: h.index, seq: seq, intended: e.Intended, kind: e.Kind, next: next.Next}
	switch next.Next {
	case cluster.Moved, cluster.Ask:
		red := next.Redirect
		rd.hslot, rd.addr = red.Slot, red.Addr
		h.run.noteRedirect(h, red)
		if red.Ask {
			h.ask.Add(1)
		} else {
			h.moved.Add(1)
		}
	case cluster.Broken:
		rd.bad = next.Err.Error()
	case cluster.Retry:
		rd.code = next.Code
		h.retries.Add(1)
		h.run.noteRetry(h, rd.code)
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

// wake installs the connections of joined nodes, applies a refreshed slot
// map and handles the redirects the readers handed over, then forgets the
// bytes of the answered commands.
func (p *pacer) clusterWake(el int64) {
	cl := p.cl
	p.takeJoined()
	if t := cl.fresh.Swap(nil); t != nil {
		p.noteRefresh(t)
		cl.apply(t, func(addr, id string) int {
			k, _, _ := p.join(addr, id)
			return k
		})
		p.run.publishNodes() // a replica that took over is a primary now
	}
	// Read the heads before taking the redirects: a reader hands its
	// redirect over before it moves its head past it.
	for i, s := range p.run.lanes {
		if s.c != nil {
			cl.heads[i] = cl.stores[i].next - uint64(s.c.InFlight())
		}
	}
	p.takeRedirects(el)
	for i, s := range p.run.lanes {
		if s.c != nil {
			cl.stores[i].release(cl.heads[i])
		}
	}
}

// takeRedirects resends the redirected requests or gives up on them.
func (p *pacer) takeRedirects(el int64) {
	cl := p.cl
	for _, rd := range cl.redirs.take() {
		cmd, tries := cl.stores[rd.lane].get(rd.seq)
		from := p.run.lanes[rd.lane].node
		if rd.bad != "" {
			p.giveUp(from, rd.intended, rd.kind, scheduler.CodeProtocolError, rd.bad)
			continue
		}
		if cmd == nil {
			p.giveUp(from, rd.intended, rd.kind, codeResendUnsent, "a redirected command was no longer held")
			continue
		}
		tries++
		if int(tries) >= cl.maxTries {
			code := rd.code
			if code == "" {
				code = CodeRedirectLoop
				if rd.next == cluster.Ask {
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
		case rd.next == cluster.Moved || rd.next == cluster.Ask:
			// "-MOVED 3999 :6381" names a port on the host of the node
			// that sent it.
			addr := cluster.Redirect{Addr: rd.addr}.Target(cl.members[from].Addr)
			to = cl.node(addr)
			if to < 0 {
				var code, why string
				if to, code, why = p.join(addr, ""); to < 0 {
					p.giveUp(from, rd.intended, rd.kind, code, why)
					cl.refresh()
					continue
				}
			}
			if rd.next == cluster.Moved {
				cl.owner.Set(rd.hslot, to)
			}
			if cluster.Refetch(rd.next) {
				cl.refresh()
			}
			it.ask = rd.next == cluster.Ask
		default: // CLUSTERDOWN, TRYAGAIN: back off, refresh, resend to the owner
			if cluster.Refetch(rd.next) {
				cl.refresh()
			}
			it.notBefore = nanotime() + int64(cluster.Backoff(int(tries)))
			var hasKey bool
			to, _, hasKey = cl.route(cmd, kind, 0, false)
			if !hasKey {
				to = from
			}
			to = p.readReplica(to, kind)
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
	run.tallyFailed(intended, kind, nanotime()-intended)
	p.cl.nodes[node].errors++
	p.cl.errs.Add(1)
	if k := int(kind & kindMask); k < len(p.cl.kinds) {
		p.cl.kinds[k].Errors++
		p.cl.kinds[k].NoteError([]byte(code))
		run.kinds[k].Errors.Add(1)
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
	p.run.tallyFailed(intended, kind, 0)
	p.cl.nodes[node].unsent++
	if k := int(kind & kindMask); k < len(p.cl.kinds) {
		p.cl.kinds[k].Unsent++
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
