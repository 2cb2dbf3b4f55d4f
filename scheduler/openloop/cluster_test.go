package openloop

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/drivertest"
	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// oneKey is the key positions of a command whose one key is its first
// argument (GET, SET).
var oneKey = []cluster.KeySpec{{First: 1, Last: 1, Step: 1}}

// compileKeyed compiles args, a command whose name is args[0], with its
// placeholders over keyspace keys.
func compileKeyed(t *testing.T, keyspace uint64, args ...string) *scenarios.Template {
	t.Helper()
	tpl, err := scenarios.Compile(args[0], args, scenarios.Options{Keyspace: keyspace})
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// clusterConns dials per connections to each primary of c, for a run of
// commands whose one key is the first argument.
func clusterConns(t *testing.T, c *redistest.Cluster, per int) ([]*conn.Conn, *Cluster) {
	t.Helper()
	ctx := context.Background()
	top, err := cluster.Discover(ctx, conn.Options{Addr: c.Addr(), Now: scheduler.Now})
	if err != nil {
		t.Fatal(err)
	}
	oc := &Cluster{PerNode: per, Topology: top, Keys: oneKey}
	var conns []*conn.Conn
	for i, p := range top.Primaries {
		oc.Nodes = append(oc.Nodes, scheduler.Node{Addr: p.Addr, ID: p.ID, Slots: top.SlotsOf(i)})
		conns = append(conns, drivertest.Dial(t, p.Addr, per, 0)...)
	}
	oc.Dial = dialNode
	oc.Refresh = func(ctx context.Context) (*cluster.Topology, error) {
		return cluster.Discover(ctx, conn.Options{Addr: c.Addr(), Now: scheduler.Now})
	}
	return conns, oc
}

// dialNode is Cluster.Dial for the tests' runs: a connection to a
// node, without the probe a run's first connections make.
func dialNode(ctx context.Context, addr string) (*conn.Conn, error) {
	return conn.Dial(ctx, conn.Options{Addr: addr, SkipProbe: true, Now: scheduler.Now})
}

// TestClusterRunSurvivesASlotMigration moves slots holding keys during a
// run: the requests redirected (ASK during the move, MOVED after) are all
// resent and complete.
func TestClusterRunSurvivesASlotMigration(t *testing.T) {
	testrun.SkipShort(t, "migrates slots of a Redis Cluster mid-run")
	c := redistest.StartCluster(t, 3)
	tpl := compileKeyed(t, 20000, "SET", "key:__rand_int__", "v")
	// Fill the keyspace first, so the slots moved hold keys.
	conns, oc := clusterConns(t, c, 2)
	res := runOpen(t, conns, scenarios.NewStream(tpl, 1), Config{
		Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(20000)}, Requests: 20000, Cluster: oc,
	})
	if res.Counts.Completed != 20000 || len(res.Nodes) != 3 {
		t.Fatalf("fill: %+v, %d nodes", res.Counts, len(res.Nodes))
	}

	conns, oc = clusterConns(t, c, 2)
	onStart, moved := moveSlotsDuring(t, c, 500*time.Millisecond, 0, 1, 20)
	res, err := Run(context.Background(), conns, scenarios.NewStream(tpl, 2), Config{
		Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(5000)}, Duration: 3 * time.Second, Cluster: oc,
		OnStart: onStart,
	})
	moved()
	if err != nil {
		t.Fatal(err)
	}
	cnt := res.Counts
	var redirects, moves, asks, sent, completed uint64
	for _, n := range res.Nodes {
		redirects += n.Redirects
		moves += n.Moved
		asks += n.Ask
		sent += n.Counts.Sent
		completed += n.Counts.Completed
	}
	t.Logf("counts %+v; moved %d, ask %d; first error %q", cnt, moves, asks, res.FirstError)
	if cnt.Completed != cnt.Scheduled || cnt.Errors != 0 || cnt.Unsent != 0 || cnt.Timeouts != 0 {
		t.Errorf("lost requests in a migration: %+v (%v)", cnt, res.ErrorCodes)
	}
	if moves+asks == 0 {
		t.Errorf("no redirect counted during a migration of 20 slots")
	}
	if sent != cnt.Sent || completed != cnt.Completed {
		t.Errorf("nodes sent %d completed %d, test %d and %d", sent, completed, cnt.Sent, cnt.Completed)
	}
}

// TestClusterHotPathDoesNotAllocate is TestHotPathDoesNotAllocate for a
// cluster run: three fake primaries, keys routed by slot, and a tagged
// kind filled per request.
func TestClusterHotPathDoesNotAllocate(t *testing.T) {
	top, nodes := threeNodes()
	nilReply := []byte("$-1\r\n")
	mallocs := func(requests uint64, tagged bool) uint64 {
		key := "key:__rand_int__"
		if tagged {
			key = "key:{tag}:__rand_int__"
		}
		tpl := compileKeyed(t, 1000, "GET", key)
		var conns []*conn.Conn
		oc := &Cluster{PerNode: 2, Topology: cluster.NewTopology(nil), Keys: oneKey, Tagged: []bool{tagged}}
		for range nodes {
			srv := drivertest.NewServer(t, tpl.Len(), func(int) ([]byte, bool) { return nilReply, false })
			addr := srv.Addr()
			oc.Nodes = append(oc.Nodes, scheduler.Node{Addr: addr})
			oc.Topology.Primaries = append(oc.Topology.Primaries, cluster.Node{Addr: addr})
			conns = append(conns, srv.Dial(t, 2, 0)...)
		}
		for s := range uint16(cluster.Slots) {
			oc.Topology.Assign(s, s, top.Owner(s))
		}
		res, m := runOpenMallocs(t, conns, scenarios.NewStream(tpl, 1), Config{
			Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(40000)}, Requests: requests, Cluster: oc,
		})
		if res.Counts.Completed != requests {
			t.Fatalf("counts %+v", res.Counts)
		}
		return m
	}
	for _, tagged := range []bool{false, true} {
		short, long := mallocs(1000, tagged), mallocs(9000, tagged)
		per := (float64(long) - float64(short)) / 8000
		t.Logf("tagged %v: %d allocations for 1000 requests, %d for 9000", tagged, short, long)
		if per > 0.05 {
			t.Errorf("tagged %v: %.2f allocations per request on the cluster hot path", tagged, per)
		}
	}
}

// TestClusterRunFollowsASK: every slot of one primary is being migrated
// (MIGRATING there, IMPORTING on another) and its keys do not exist yet,
// so it answers -ASK to every request: each is resent with ASKING to the
// importing primary and completes there.
func TestClusterRunFollowsASK(t *testing.T) {
	testrun.SkipShort(t, "migrates a slot of a Redis Cluster mid-run")
	c := redistest.StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src, dst := c.Nodes[0], c.Nodes[1]
	if err := c.MarkMigrating(0, 1); err != nil {
		t.Fatal(err)
	}
	tpl := compileKeyed(t, 100000, "SET", "key:__rand_int__", "v")
	conns, oc := clusterConns(t, c, 2)
	res, err := Run(ctx, conns, scenarios.NewStream(tpl, 3), Config{
		Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(5000)}, Requests: 3000, Cluster: oc,
	})
	if err != nil {
		t.Fatal(err)
	}
	cnt := res.Counts
	if cnt.Completed != 3000 || cnt.Errors+cnt.Timeouts+cnt.Unsent != 0 || cnt.Sent != 3000 {
		t.Errorf("counts %+v (%v, %q)", cnt, res.ErrorCodes, res.FirstError)
	}
	for _, n := range res.Nodes {
		switch n.Addr {
		case src.Addr:
			if n.Ask == 0 || n.Ask != n.Counts.Sent || n.Counts.Completed != 0 {
				t.Errorf("migrating node: sent %d, ask %d, completed %d", n.Counts.Sent, n.Ask, n.Counts.Completed)
			}
		case dst.Addr:
			if n.Ask != 0 || n.Counts.Completed <= n.Counts.Sent {
				t.Errorf("importing node: sent %d, completed %d (its own and the ASKed)", n.Counts.Sent, n.Counts.Completed)
			}
		}
	}
}

// TestClusterRetriesAreBounded: a node that answers -TRYAGAIN to its first
// 100 commands sees each such request again after a backoff (10, 20, 40 ms:
// past the 100th within four sends), and it completes; one that always answers -CLUSTERDOWN gets each request
// DefaultClusterTries times, then it is an error.
func TestClusterRetriesAreBounded(t *testing.T) {
	t.Parallel()
	tpl := compileKeyed(t, 1000, "GET", "key:__rand_int__")
	tryAgain := []byte("-TRYAGAIN Multiple keys request during rehashing of slot\r\n")
	down := []byte("-CLUSTERDOWN The cluster is down\r\n")
	nilReply := []byte("$-1\r\n")
	for _, c := range []struct {
		name  string
		reply func(k int) ([]byte, bool)
		check func(t *testing.T, res *scheduler.Result, received int64)
	}{
		{"tryagain", func(k int) ([]byte, bool) {
			if k < 100 {
				return tryAgain, false
			}
			return nilReply, false
		}, func(t *testing.T, res *scheduler.Result, received int64) {
			if res.Counts.Completed != 200 || res.Counts.Errors != 0 || res.Nodes[0].Redirects == 0 {
				t.Errorf("counts %+v, node %+v", res.Counts, res.Nodes[0])
			}
		}},
		{"clusterdown", func(int) ([]byte, bool) { return down, false }, func(t *testing.T, res *scheduler.Result, received int64) {
			if res.Counts.Errors != 200 || res.ErrorCodes["CLUSTERDOWN"] != 200 || received != 200*DefaultClusterTries {
				t.Errorf("counts %+v, codes %v, %d commands received", res.Counts, res.ErrorCodes, received)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := drivertest.NewServer(t, tpl.Len(), c.reply)
			addr := srv.Addr()
			top := cluster.NewTopology([]cluster.Node{{Addr: addr}})
			top.Assign(0, cluster.Slots-1, 0)
			res := runOpen(t, srv.Dial(t, 1, 0), scenarios.NewStream(tpl, 1), Config{
				Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(2000)}, Requests: 200, Drain: 5 * time.Second,
				Cluster: &Cluster{Nodes: []scheduler.Node{{Addr: addr}}, PerNode: 1, Topology: top,
					Keys: oneKey},
			})
			if !res.Counts.Balanced() || res.Counts.Sent != 200 {
				t.Errorf("counts %+v", res.Counts)
			}
			c.check(t, res, srv.Received())
		})
	}
}

// TestClusterRunJoinsANewNode: the one primary of the first slot map
// answers -MOVED to a primary it did not hold (the cluster scaled out):
// that node joins, with its own connections and result, and every request
// completes there.
func TestClusterRunJoinsANewNode(t *testing.T) {
	tpl := compileKeyed(t, 1000, "GET", "key:__rand_int__")
	nilReply := []byte("$-1\r\n")
	b := drivertest.NewServer(t, tpl.Len(), func(int) ([]byte, bool) { return nilReply, false })
	bAddr := b.Addr()
	a, top := redirectingPrimary(t, tpl.Len(), bAddr)
	aAddr := a.Addr()
	var dials atomic.Int64
	// An observer looks all along, while the pacer adds the connections
	// (go test -race watches).
	watching, watched := make(chan struct{}), make(chan struct{})
	maxOf := 0
	res, err := Run(context.Background(), a.Dial(t, 2, 0), scenarios.NewStream(tpl, 1), Config{
		Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(5000)}, Requests: 500,
		OnStart: func(l *scheduler.Live) {
			go func() {
				defer close(watched)
				for {
					select {
					case <-watching:
						return
					default:
					}
					c, _ := l.Connections()
					maxOf = max(maxOf, c.Of)
					_ = l.Totals()
					_ = l.Progress()
					time.Sleep(100 * time.Microsecond)
				}
			}()
		},
		Cluster: &Cluster{Nodes: []scheduler.Node{{Addr: aAddr, Slots: cluster.Slots}}, PerNode: 2, Topology: top,
			Keys: oneKey,
			Dial: func(ctx context.Context, addr string) (*conn.Conn, error) {
				dials.Add(1)
				return dialNode(ctx, addr)
			}},
	})
	close(watching)
	<-watched
	if err != nil {
		t.Fatal(err)
	}
	cnt := res.Counts
	if maxOf != 4 {
		t.Errorf("observers saw at most %d connections, want 4", maxOf)
	}
	if cnt.Completed != 500 || cnt.Sent != 500 || cnt.Errors+cnt.Timeouts+cnt.Unsent != 0 {
		t.Errorf("counts %+v (%v, %q)", cnt, res.ErrorCodes, res.FirstError)
	}
	if len(res.Nodes) != 2 || res.Connections != 4 || dials.Load() != 2 {
		t.Fatalf("%d connections (%d dialed), nodes %+v", res.Connections, dials.Load(), res.Nodes)
	}
	na, nb := res.Nodes[0], res.Nodes[1]
	if na.Joined || na.Moved == 0 || na.Counts.Completed != 0 || na.Counts.Sent != 500 {
		t.Errorf("first node: %+v", na)
	}
	if nb.Addr != bAddr || !nb.Joined || nb.Slots != 0 || nb.Connections != 2 || nb.Counts.Completed != 500 ||
		nb.Response.TotalCount() != 500 || nb.Counts.Sent != 0 {
		t.Errorf("joined node: %+v", nb)
	}
}

// TestClusterRunNodeThatCannotJoin: the primary a -MOVED names cannot be
// reached: the redirected requests are errors (CodeJoinFailed) saying so,
// counted on that node, and the run still accounts for every request.
func TestClusterRunNodeThatCannotJoin(t *testing.T) {
	tpl := compileKeyed(t, 1000, "GET", "key:__rand_int__")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close() // nothing listens there: a dial is refused
	a, top := redirectingPrimary(t, tpl.Len(), gone)
	aAddr := a.Addr()
	res := runOpen(t, a.Dial(t, 2, 0), scenarios.NewStream(tpl, 1), Config{
		Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(5000)}, Requests: 300,
		Cluster: &Cluster{Nodes: []scheduler.Node{{Addr: aAddr}}, PerNode: 2, Topology: top,
			Keys: oneKey,
			Dial: dialNode},
	})
	cnt := res.Counts
	if !cnt.Balanced() || cnt.Sent != 300 || cnt.Errors != 300 || res.ErrorCodes[CodeJoinFailed] != 300 {
		t.Errorf("counts %+v, codes %v", cnt, res.ErrorCodes)
	}
	if !strings.Contains(res.FirstError, gone) || !strings.Contains(res.FirstError, "could not be reached") {
		t.Errorf("first error %q", res.FirstError)
	}
	if len(res.Nodes) != 2 || !res.Nodes[1].Joined || res.Nodes[1].Counts.Errors != 300 || res.Nodes[0].Counts.Errors != 0 {
		t.Errorf("nodes %+v", res.Nodes)
	}
}

// TestClusterRunFollowsAScaleOut: a fourth primary joins the cluster
// (redis-cli --cluster add-node) after the run took its slot map, and
// slots holding keys move to it during the run: the run opens connections
// to it, every request completes, and it has a result of its own with the
// requests it served.
func TestClusterRunFollowsAScaleOut(t *testing.T) {
	testrun.SkipShort(t, "adds a node to a Redis Cluster mid-run")
	c := redistest.StartCluster(t, 3)
	fourth := c.StartNode(t)
	tpl := compileKeyed(t, 20000, "SET", "key:__rand_int__", "v")
	conns, oc := clusterConns(t, c, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Join(ctx, fourth); err != nil { // a primary without slots: the run leaves it alone
		t.Fatal(err)
	}
	onStart, moved := moveSlotsDuring(t, c, 300*time.Millisecond, 0, 3, 200)
	res, err := Run(ctx, conns, scenarios.NewStream(tpl, 4), Config{
		Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(3000)}, Duration: 4 * time.Second, Cluster: oc,
		OnStart: onStart,
	})
	moved()
	if err != nil {
		t.Fatal(err)
	}
	cnt := res.Counts
	var redirects, completed uint64
	for _, n := range res.Nodes {
		redirects += n.Moved + n.Ask
		completed += n.Counts.Completed
	}
	t.Logf("counts %+v; redirects %d; nodes %d; first error %q", cnt, redirects, len(res.Nodes), res.FirstError)
	if cnt.Completed != cnt.Scheduled || cnt.Errors+cnt.Timeouts+cnt.Unsent != 0 {
		t.Errorf("requests lost in a scale-out: %+v (%v)", cnt, res.ErrorCodes)
	}
	if len(res.Nodes) != 4 || res.Connections != 8 {
		t.Fatalf("%d connections, %d nodes: %+v", res.Connections, len(res.Nodes), res.Nodes)
	}
	n := res.Nodes[3]
	t.Logf("joined node: %+v", n.Counts)
	if n.Addr != fourth.Addr || !n.Joined || n.Slots != 0 || n.Connections != 2 || n.Counts.Completed == 0 || len(n.ID) != 40 {
		t.Errorf("the new primary's result: %+v (id %q)", n, n.ID)
	}
	if redirects == 0 || completed != cnt.Completed {
		t.Errorf("%d redirects counted; nodes completed %d of %d", redirects, completed, cnt.Completed)
	}
	if v, err := fourth.Do("DBSIZE"); err != nil || v == "0" {
		t.Errorf("the new primary holds %s keys (%v)", v, err)
	}
}

// moveSlotsDuring returns an OnStart that moves count slots from primary
// from to primary to of c, delay after the run starts (resharding under
// load), and a wait that returns once the move is over and fails the test
// if it failed (at once when the run never started).
func moveSlotsDuring(t *testing.T, c *redistest.Cluster, delay time.Duration, from, to, count int) (onStart func(*scheduler.Live), wait func()) {
	t.Helper()
	var moveErr atomic.Value
	var started atomic.Bool
	moved := make(chan struct{})
	onStart = func(*scheduler.Live) {
		started.Store(true)
		go func() {
			defer close(moved)
			time.Sleep(delay)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := c.MoveSlots(ctx, from, to, count); err != nil {
				moveErr.Store(err)
			}
		}()
	}
	wait = func() {
		t.Helper()
		if !started.Load() {
			return // the run never started: its error says why
		}
		<-moved
		if e := moveErr.Load(); e != nil {
			t.Fatal(e)
		}
	}
	return onStart, wait
}

// redirectingPrimary starts the one primary of a slot map (top) that
// answers each of the n commands of a template with -MOVED to addr: a
// primary the map does not hold, which the run must join.
func redirectingPrimary(t *testing.T, n int, addr string) (*drivertest.Server, *cluster.Topology) {
	t.Helper()
	moved := []byte("-MOVED 0 " + addr + "\r\n")
	a := drivertest.NewServer(t, n, func(int) ([]byte, bool) { return moved, false })
	top := cluster.NewTopology([]cluster.Node{{Addr: a.Addr()}})
	top.Assign(0, cluster.Slots-1, 0)
	return a, top
}

// TestClusterRunMovedToAPortOnly: a primary on a second loopback address
// (127.0.0.2) answers Redis 7's "-MOVED 0 :port" (an endpoint it does not
// know: the host the client talks to). The request goes to that port on
// 127.0.0.2, never to the local machine's (an impostor listens on
// 127.0.0.1 at the same port when it can).
func TestClusterRunMovedToAPortOnly(t *testing.T) {
	tpl := compileKeyed(t, 1000, "GET", "key:__rand_int__")
	nilReply := []byte("$-1\r\n")
	b := drivertest.NewServerOn(t, "127.0.0.2:0", tpl.Len(), func(int) ([]byte, bool) { return nilReply, false })
	bAddr := b.Addr()
	_, port, _ := net.SplitHostPort(bAddr)
	impostor, err := hostile.ListenOn("127.0.0.1:"+port, hostile.AcceptClose)
	if err == nil {
		defer impostor.Close()
	} else {
		t.Logf("no impostor on 127.0.0.1:%s: %v", port, err)
	}
	moved := []byte("-MOVED 0 :" + port + "\r\n")
	a := drivertest.NewServerOn(t, "127.0.0.2:0", tpl.Len(), func(int) ([]byte, bool) { return moved, false })
	aAddr := a.Addr()
	top := cluster.NewTopology([]cluster.Node{{Addr: aAddr}})
	top.Assign(0, cluster.Slots-1, 0)
	res := runOpen(t, a.Dial(t, 1, 0), scenarios.NewStream(tpl, 1), Config{
		Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(5000)}, Requests: 300,
		Cluster: &Cluster{Nodes: []scheduler.Node{{Addr: aAddr, Slots: cluster.Slots}}, PerNode: 1, Topology: top,
			Keys: oneKey,
			Dial: dialNode},
	})
	cnt := res.Counts
	if cnt.Completed != 300 || cnt.Errors+cnt.Timeouts+cnt.Unsent != 0 {
		t.Errorf("counts %+v (%v, %q)", cnt, res.ErrorCodes, res.FirstError)
	}
	if len(res.Nodes) != 2 || res.Nodes[1].Addr != bAddr || res.Nodes[1].Counts.Completed != 300 || b.Received() != 300 {
		t.Errorf("nodes %+v; %s received %d", res.Nodes, bAddr, b.Received())
	}
	if impostor != nil && impostor.Accepted() != 0 {
		t.Errorf("%d connections reached 127.0.0.1:%s", impostor.Accepted(), port)
	}
}

// TestClusterRunMovedToNoPort: "-MOVED 1 :99999" names no node. Every
// request fails as a protocol error naming the reply; no node joins (and
// no dial to port 99999 fails later).
func TestClusterRunMovedToNoPort(t *testing.T) {
	tpl := compileKeyed(t, 1000, "GET", "key:__rand_int__")
	for _, reply := range []string{"MOVED 1 :99999", "ASK 1 127.0.0.1:0", "MOVED 1 127.0.0.1:http"} {
		t.Run(reply, func(t *testing.T) {
			moved := []byte("-" + reply + "\r\n")
			a := drivertest.NewServerOn(t, "127.0.0.1:0", tpl.Len(), func(int) ([]byte, bool) { return moved, false })
			aAddr := a.Addr()
			top := cluster.NewTopology([]cluster.Node{{Addr: aAddr}})
			top.Assign(0, cluster.Slots-1, 0)
			res := runOpen(t, a.Dial(t, 1, 0), scenarios.NewStream(tpl, 1), Config{
				Timeline: timeline.Uniform{Rate: timeline.RatePerSecond(5000)}, Requests: 200,
				Cluster: &Cluster{Nodes: []scheduler.Node{{Addr: aAddr, Slots: cluster.Slots}}, PerNode: 1, Topology: top,
					Keys: oneKey, Dial: dialNode},
			})
			cnt := res.Counts
			if cnt.Errors != 200 || res.ErrorCodes[scheduler.CodeProtocolError] != 200 {
				t.Errorf("counts %+v, codes %v: want 200 protocol errors", cnt, res.ErrorCodes)
			}
			if !strings.Contains(res.FirstError, "protocol error") || !strings.Contains(res.FirstError, "-"+reply) {
				t.Errorf("first error %q: want a protocol error naming %q", res.FirstError, reply)
			}
			if len(res.Nodes) != 1 {
				t.Errorf("nodes %+v: none may join", res.Nodes)
			}
		})
	}
}
