package sentinel

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/events"
)

// channels are what a Follower subscribes to: the failover it follows,
// and what it notes beside it.
var channels = []string{"+switch-master", "+odown", "-odown", "+convert-to-slave"}

// Liveness of a subscription: a PING every pingEvery; a sentinel that
// sends nothing (no message, no pong) for silentFor is given up on, and
// another is subscribed to.
const (
	pingEvery = time.Second
	silentFor = 3 * time.Second
)

// retryAfter is how long a Follower waits when no sentinel would take its
// subscription before it tries them all again.
const retryAfter = time.Second

// refreshEvery is how often a Follower asks for the replicas again: a
// failover's former primary joins them only once the sentinels convert
// it, seconds after the switch. A variable for the tests that follow
// the announcements alone.
var refreshEvery = 2 * time.Second

// state is the primary and its replicas as last known; Epoch counts the
// switches seen.
type state struct {
	primary  string
	replicas []Replica
	epoch    uint64
	// config is the sentinels' configuration epoch of primary as known
	// (from an answer), or its lower bound (one more than the former
	// primary's, after a +switch-master); -1 unknown.
	config int64
}

// Follower keeps the address of the primary watched under a master name
// current while a command runs: it listens to every sentinel's
// +switch-master and updates Primary at the first, and asks for the
// replicas again now and then. One sentinel's subscription (another's
// when that one goes away) also brings what it notes beside the switch.
// Safe for concurrent use.
//
// Every sentinel, not one: the sentinel that leads a failover announces
// the switch last, once it has reconfigured the other replicas, a second
// or more after the others learnt the new configuration from it; the
// former primary takes the writes sent to it meanwhile, and loses them.
type Follower struct {
	cfg   Config
	now   func() int64
	st    atomic.Pointer[state]
	log   atomic.Pointer[events.Log]
	on    []func(from, to string)
	onMu  sync.Mutex
	subs  atomic.Pointer[string] // the sentinel listened to now
	stop  context.CancelFunc
	wg    sync.WaitGroup
	again chan struct{} // a refresh asked for
	// first is the sentinel to try first: the last that took the
	// subscription.
	first atomic.Int32
}

// Follow starts following the primary that Discover found (t) with the
// sentinels of c; now is the clock events are noted on (the run's). Close
// stops it.
func Follow(ctx context.Context, c Config, t Topology, now func() int64) *Follower {
	if now == nil {
		now = func() int64 { return time.Now().UnixNano() }
	}
	f := &Follower{cfg: c, now: now, again: make(chan struct{}, 1)}
	f.st.Store(&state{primary: t.Primary, replicas: t.Replicas, config: t.ConfigEpoch})
	if i := slices.Index(c.Addrs, t.From); i >= 0 {
		f.first.Store(int32(i))
	}
	ctx, f.stop = context.WithCancel(ctx)
	f.wg.Go(func() { f.loop(ctx) })
	f.wg.Go(func() { f.refreshing(ctx) })
	for _, a := range c.Addrs {
		f.wg.Go(func() { f.watch(ctx, a) })
	}
	return f
}

// Close stops following and waits for its goroutines to end. Idempotent.
func (f *Follower) Close() {
	f.stop()
	f.wg.Wait()
}

// Primary returns the primary's address and how many switches were
// followed to it.
func (f *Follower) Primary() (addr string, epoch uint64) {
	s := f.st.Load()
	return s.primary, s.epoch
}

// Epoch returns how many switches were followed.
func (f *Follower) Epoch() uint64 { return f.st.Load().epoch }

// Replicas returns the replicas as last listed.
func (f *Follower) Replicas() []Replica { return slices.Clone(f.st.Load().replicas) }

// Master is the name the primary is watched under.
func (f *Follower) Master() string { return f.cfg.Master }

// Listening returns the sentinel whose messages are followed now ("" when
// none took the subscription).
func (f *Follower) Listening() string {
	if p := f.subs.Load(); p != nil {
		return *p
	}
	return ""
}

// SetLog makes l receive the events the sentinels announce (nil: none
// noted): the log of the test that runs now.
func (f *Follower) SetLog(l *events.Log) { f.log.Store(l) }

// OnSwitch registers fn, called (on the Follower's goroutine) after each
// switch it follows.
func (f *Follower) OnSwitch(fn func(from, to string)) {
	f.onMu.Lock()
	f.on = append(f.on, fn)
	f.onMu.Unlock()
}

// note passes n to the current log, if any.
func (f *Follower) note(n events.Note) {
	if l := f.log.Load(); l != nil {
		l.Note(n)
	}
}

// refreshing asks for the replicas every refreshEvery, and when a
// message asks for it, until ctx ends.
func (f *Follower) refreshing(ctx context.Context) {
	t := time.NewTicker(refreshEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-f.again:
		}
		f.refresh(ctx)
	}
}

// refreshSoon asks refreshing for a refresh now.
func (f *Follower) refreshSoon() {
	select {
	case f.again <- struct{}{}:
	default: // one is pending already
	}
}

// loop subscribes to one sentinel after another until ctx ends.
func (f *Follower) loop(ctx context.Context) {
	n := len(f.cfg.Addrs)
	for ctx.Err() == nil {
		listened := false
		for k := range n {
			i := (int(f.first.Load()) + k) % n
			if f.listen(ctx, f.cfg.Addrs[i], channels, true) {
				f.first.Store(int32(i))
				listened = true
				break // it went away after serving: start over from it
			}
			if ctx.Err() != nil {
				return
			}
		}
		f.subs.Store(nil)
		if !listened {
			select {
			case <-ctx.Done():
			case <-time.After(retryAfter):
			}
		}
	}
}

// watch follows sentinel addr's +switch-master until ctx ends,
// subscribing again after retryAfter whenever it goes away, goes silent
// or cannot be reached.
func (f *Follower) watch(ctx context.Context, addr string) {
	for ctx.Err() == nil {
		f.listen(ctx, addr, channels[:1], false)
		select {
		case <-ctx.Done():
		case <-time.After(retryAfter):
		}
	}
}

// listen subscribes to chans on sentinel addr and follows what it
// announces until it goes away, goes silent or ctx ends; it reports
// whether the subscription was taken. The main subscription (loop's) is
// the one Listening names, and asks for a refresh once taken.
func (f *Follower) listen(ctx context.Context, addr string, chans []string, main bool) bool {
	dctx, cancel := context.WithTimeout(ctx, 2*f.cfg.timeout())
	c, err := conn.Dial(dctx, f.cfg.options(addr))
	cancel()
	if err != nil {
		return false
	}
	defer c.Close()
	var heard atomic.Int64
	heard.Store(time.Now().UnixNano())
	stop := make(chan struct{})
	defer close(stop)
	go func() { // pings, and the watchdog that ends a silent subscription
		t := time.NewTicker(pingEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				c.Close()
				return
			case <-stop:
				return
			case <-t.C:
				if time.Now().UnixNano()-heard.Load() > int64(silentFor) {
					c.Close()
					return
				}
				_ = c.Write(conn.AppendCommand(nil, "PING"))
			}
		}
	}()
	if err := c.Write(conn.AppendCommand(nil, append([]string{"SUBSCRIBE"}, chans...)...)); err != nil {
		return false
	}
	for range chans {
		v, err := c.ReadValue()
		if err != nil || len(v.Elems) < 1 || !strings.EqualFold(v.Elems[0].Str, "subscribe") {
			return false
		}
		heard.Store(time.Now().UnixNano())
	}
	if main {
		f.subs.Store(&addr)
		// A switch while nobody listened: ask what the primary is now.
		f.refreshSoon()
	}
	for {
		v, err := c.ReadValue()
		if err != nil {
			return true
		}
		heard.Store(time.Now().UnixNano())
		if len(v.Elems) == 3 && v.Elems[0].Str == "message" {
			f.message(addr, v.Elems[1].Str, v.Elems[2].Str)
		}
	}
}

// message handles one announcement of sentinel from on channel ch.
func (f *Follower) message(from, ch, text string) {
	w := strings.Fields(text)
	switch ch {
	case "+switch-master":
		// "<name> <old-ip> <old-port> <new-ip> <new-port>"
		if len(w) != 5 || w[0] != f.cfg.Master {
			return
		}
		old, nu := joinAddr(w[1], w[2]), joinAddr(w[3], w[4])
		f.switchTo(nu, "+switch-master", from, old, -1)
		f.refreshSoon() // the replicas change too
	case "+odown", "-odown":
		// "master <name> <ip> <port> ..."
		if len(w) < 4 || w[0] != "master" || w[1] != f.cfg.Master {
			return
		}
		what := "the sentinels agree the primary is down"
		if ch == "-odown" {
			what = "the sentinels no longer think the primary down"
		}
		f.note(events.Note{Kind: events.PrimaryDown, At: f.now(), Node: joinAddr(w[2], w[3]), Seen: ch, Detail: what + " (" + f.cfg.Master + ", sentinel " + from + ")"})
	case "+convert-to-slave":
		// "slave <ip:port> <ip> <port> @ <name> <primary-ip> <primary-port>"
		if len(w) < 6 || w[5] != f.cfg.Master {
			return
		}
		node := joinAddr(w[2], w[3])
		f.note(events.Note{Kind: events.RoleChange, At: f.now(), Node: node, Seen: ch,
			Detail: node + " made a replica of the primary (" + f.cfg.Master + ", sentinel " + from + ")"})
		f.refreshSoon()
	}
}

// switchTo makes nu the primary (a switch from old, learnt from
// sentinel from by how, with the configuration epoch config: -1 from an
// announcement, which carries none, and then one more than the former
// primary's), notes the failover and tells OnSwitch.
func (f *Follower) switchTo(nu, how, from, old string, config int64) {
	for {
		cur := f.st.Load()
		if cur.primary == nu {
			return // already followed (a second sentinel's message)
		}
		if config < 0 && cur.config >= 0 {
			config = cur.config + 1
		}
		next := &state{primary: nu, epoch: cur.epoch + 1, config: config}
		for _, r := range cur.replicas {
			if r.Addr != nu {
				next.replicas = append(next.replicas, r)
			}
		}
		if f.st.CompareAndSwap(cur, next) {
			if old == "" {
				old = cur.primary
			}
			break
		}
	}
	f.note(events.Note{Kind: events.Failover, At: f.now(), Node: old, To: nu, Seen: how,
		Detail: f.cfg.Master + ": " + old + " -> " + nu + " (sentinel " + from + ")"})
	f.onMu.Lock()
	on := slices.Clone(f.on)
	f.onMu.Unlock()
	for _, fn := range on {
		fn(old, nu)
	}
}

// refresh asks the sentinels again: a primary that moved while nobody
// listened is followed, and the replicas are listed anew.
func (f *Follower) refresh(ctx context.Context) {
	c := f.cfg
	first := int(f.first.Load())
	c.Addrs = append(c.Addrs[first:len(c.Addrs):len(c.Addrs)], c.Addrs[:first]...)
	t, err := Discover(ctx, c)
	if err != nil {
		return
	}
	f.answered(t)
}

// answered takes a sentinel's answer (Discover's) into the state: a
// primary that moved while nobody listened is followed, unless the
// answer's configuration is older than the one followed; the replicas
// are listed anew.
func (f *Follower) answered(t Topology) {
	if cur := f.st.Load(); t.Primary != cur.primary {
		if t.ConfigEpoch >= 0 && cur.config >= 0 && t.ConfigEpoch < cur.config {
			// A sentinel that has not heard of the last failover yet
			// (the others learn it from the leader, a moment later):
			// going back to its primary would send the writes to the
			// former one. Asked again at the next refresh.
			return
		}
		f.switchTo(t.Primary, "primary changed (asked "+t.From+")", t.From, "", t.ConfigEpoch)
	}
	for {
		cur := f.st.Load()
		if cur.primary != t.Primary {
			return
		}
		next := &state{primary: cur.primary, epoch: cur.epoch, config: max(cur.config, t.ConfigEpoch)}
		for _, r := range t.Replicas {
			if r.Addr != cur.primary {
				next.replicas = append(next.replicas, r)
			}
		}
		if f.st.CompareAndSwap(cur, next) {
			return
		}
	}
}

// joinAddr joins an announced host and port.
func joinAddr(host, port string) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}
