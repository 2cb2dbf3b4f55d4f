package endpoint

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/serverinfo"
)

// nodeProbes is how many primaries MarkNodes asks at once.
const nodeProbes = 16

// MarkNodes is Mark for a Redis Cluster: it reads the counters of each
// of its primaries (nodes) now, just before a test, and returns what tells, after
// it, what they counted since. The seed's counters alone are not the
// cluster's: the Stats returned sum the primaries' (their commands, and
// their keys when every one said how many it holds), with each primary's
// own in Stats.Nodes. A primary that could not be asked is left out of the
// sum, and Error names it. Nil from a nil Server.
func (s *Server) MarkNodes(ctx context.Context, nodes []scheduler.Node) func() *serverinfo.Stats {
	if s == nil || len(nodes) == 0 {
		return func() *serverinfo.Stats { return nil }
	}
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr
	}
	probers := make([]*serverinfo.Prober, len(addrs))
	for i, a := range addrs {
		if s.nodes == nil {
			s.nodes = map[string]*serverinfo.Prober{}
		}
		p := s.nodes[a]
		if p == nil {
			o := s.o.ForAddr(a)
			o.OnTLSHandshake = nil
			p = serverinfo.New(o)
			s.nodes[a] = p
		}
		probers[i] = p
	}
	before := make([]*serverinfo.Snapshot, len(addrs))
	eachNode(len(addrs), func(i int) { before[i] = probers[i].Before(ctx) })
	s.nodeNotices(addrs, probers)
	return func() *serverinfo.Stats {
		per := make([]*serverinfo.Stats, len(addrs))
		eachNode(len(addrs), func(i int) {
			per[i] = probers[i].Since(ctx, before[i])
			per[i].Error = s.redact(per[i].Error)
		})
		s.nodeNotices(addrs, probers)
		return sumNodes(addrs, per)
	}
}

// eachNode runs f(0) … f(n-1), nodeProbes at a time.
func eachNode(n int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, nodeProbes)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(i)
		})
	}
	wg.Wait()
}

// nodeNotices passes on each primary's refusals, naming it.
func (s *Server) nodeNotices(addrs []string, probers []*serverinfo.Prober) {
	for i, p := range probers {
		for _, n := range p.Notice() {
			s.say("pacer: " + addrs[i] + ": " + s.redact(n))
		}
	}
}

// sumNodes adds the primaries' Stats (per[i] is addrs[i]'s) into the
// cluster's: commands summed, keys summed when every primary counted them.
func sumNodes(addrs []string, per []*serverinfo.Stats) *serverinfo.Stats {
	sum := &serverinfo.Stats{Commands: map[string]serverinfo.Command{}, Nodes: make(map[string]*serverinfo.Stats, len(addrs))}
	var keys uint64
	allKeys := true
	var missed []string
	for i, st := range per {
		sum.Nodes[addrs[i]] = st
		if st.Keys == nil {
			allKeys = false
		} else {
			keys += *st.Keys
		}
		if !st.Available {
			missed = append(missed, addrs[i]+": "+st.Error)
			continue
		}
		// Merge keeps the first error: a primary's reset statistics.
		sum.Merge(&serverinfo.Stats{Available: true, Error: st.Error, Commands: st.Commands})
	}
	sum.Keys = nil
	if allKeys {
		sum.Keys = &keys
	}
	if len(missed) > 0 {
		const shown = 3
		e := strconv.Itoa(len(missed)) + " of " + strconv.Itoa(len(per)) + " primaries not counted (" + strings.Join(missed[:min(shown, len(missed))], "; ")
		if len(missed) > shown {
			e += "; …"
		}
		e += ")"
		if sum.Error != "" {
			e = sum.Error + "; " + e
		}
		sum.Error = e
	}
	return sum
}
