package cluster

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/testrun"
)

// fakeSeed listens on addr and answers CLUSTER SHARDS with shards and
// CLUSTER SLOTS with slots (nil: an error reply, as Redis 6 gives SHARDS),
// which write their replies straight to the connection; PING gets PONG and
// anything else an error. It returns the address it listens on.
// The replies are written as they are made, not built first: the tests
// count what the client allocates, in this process.
func fakeSeed(t *testing.T, addr string, shards, slots func(w io.Writer)) string {
	t.Helper()
	return hostile.StartOn(t, addr, func(c *hostile.Client) {
		w := bufio.NewWriterSize(c.Conn, 64<<10)
		for {
			args, err := c.ReadCommand()
			if err != nil {
				return
			}
			switch cmd := strings.ToUpper(strings.Join(args, " ")); {
			case cmd == "CLUSTER SHARDS" && shards != nil:
				shards(w)
			case cmd == "CLUSTER SLOTS" && slots != nil:
				slots(w)
			case cmd == "PING":
				w.WriteString("+PONG\r\n")
			default:
				w.WriteString("-ERR unknown subcommand\r\n")
			}
			if w.Flush() != nil {
				return
			}
		}
	}).Addr
}

// shardsReply writes a CLUSTER SHARDS reply of n primaries at host, on
// ports from port up, each a shard of its own: the first slotless of them
// without slots, the others sharing the slots evenly.
func shardsReply(n, slotless int, host string, port int) func(io.Writer) {
	return func(w io.Writer) {
		bw := bufio.NewWriter(w)
		bw.WriteString("*" + strconv.Itoa(n) + "\r\n")
		served := n - slotless
		for i := range n {
			bw.WriteString("*4\r\n$5\r\nslots\r\n")
			if k := i - slotless; k < 0 {
				bw.WriteString("*0\r\n")
			} else {
				lo, hi := k*Slots/served, (k+1)*Slots/served-1
				bw.WriteString("*2\r\n:" + strconv.Itoa(lo) + "\r\n:" + strconv.Itoa(hi) + "\r\n")
			}
			id := strconv.Itoa(i)
			id = strings.Repeat("0", 40-len(id)) + id
			bw.WriteString("$5\r\nnodes\r\n*1\r\n*8\r\n$2\r\nid\r\n$40\r\n" + id + "\r\n$4\r\nport\r\n:" + strconv.Itoa(port+i) +
				"\r\n$2\r\nip\r\n$" + strconv.Itoa(len(host)) + "\r\n" + host + "\r\n$4\r\nrole\r\n$6\r\nmaster\r\n")
		}
		bw.Flush()
	}
}

// TestDiscoverRefusesHostileSeeds: seeds (on a second loopback address)
// announcing more primaries than MaxPrimaries, or a reply of 64M nulls,
// are refused with an error that says why, in bounded memory. They took
// 4.9 GB (4,000 primaries, every one given connections and histograms) and
// 1.3 GB (the nulls) before.
func TestDiscoverRefusesHostileSeeds(t *testing.T) {
	const host = "127.0.0.2"
	nulls := func(w io.Writer) {
		bw := bufio.NewWriterSize(w, 64<<10)
		const n = 64 << 20
		bw.WriteString("*" + strconv.Itoa(n) + "\r\n")
		for range n {
			if _, err := bw.WriteString("$-1\r\n"); err != nil {
				return // the client gave up
			}
		}
		bw.Flush()
	}
	nestedNulls := func(w io.Writer) {
		bw := bufio.NewWriterSize(w, 64<<10)
		one := "*65536\r\n" + strings.Repeat("$-1\r\n", 65536)
		bw.WriteString("*1024\r\n")
		for range 1024 {
			if _, err := bw.WriteString(one); err != nil {
				return
			}
		}
		bw.Flush()
	}
	for _, c := range []struct {
		name          string
		shards, slots func(io.Writer)
		want          string
	}{
		{"4,000 primaries", shardsReply(4000, 0, host, 7000), nil, "lists 4000 primaries, more than the 1000 pacer supports"},
		{"65,536 slotless primaries first", shardsReply(65537, 65536, host, 7000), nil, "lists 65537 primaries"},
		{"64M nulls", nulls, nil, "too large to keep"},
		{"1,024 arrays of 65,536 nulls", nestedNulls, nil, "too large to keep"},
		{"64M nulls from CLUSTER SLOTS", nil, nulls, "too large to keep"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := fakeSeed(t, host+":0", c.shards, c.slots)
			var err error
			alloc := testrun.Allocated(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				_, err = Discover(ctx, conn.Options{Addr: addr})
			})
			t.Logf("%v; %d MB allocated", err, alloc>>20)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want %q", err, c.want)
			}
			if alloc > 400<<20 {
				t.Errorf("%d MB allocated to refuse it", alloc>>20)
			}
		})
	}
}

// TestDiscoverAtTheCap: a seed announcing MaxPrimaries primaries, the
// slotless ones first, is taken, every slot on a primary that serves
// slots, the primaries in slot order.
func TestDiscoverAtTheCap(t *testing.T) {
	addr := fakeSeed(t, "127.0.0.2:0", shardsReply(MaxPrimaries, 600, "127.0.0.2", 7000), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	top, err := Discover(ctx, conn.Options{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Primaries) != MaxPrimaries || !top.Covered() {
		t.Fatalf("%d primaries, covered %v", len(top.Primaries), top.Covered())
	}
	// The 400 that serve slots come first, in slot order; then the 600
	// without, as announced.
	for i, p := range top.Primaries {
		want := 600 + i
		if i >= 400 {
			want = i - 400
		}
		if id, _ := strconv.Atoi(strings.TrimLeft(p.ID, "0")); id != want {
			t.Fatalf("primary %d is %s, want id %d", i, p.ID, want)
		}
		if (top.SlotsOf(i) > 0) != (i < 400) {
			t.Fatalf("primary %d owns %d slots", i, top.SlotsOf(i))
		}
	}
	if top.Owner(0) != 0 || top.Owner(Slots-1) != 399 {
		t.Errorf("owners %d, %d", top.Owner(0), top.Owner(Slots-1))
	}
}

// TestTopologyIndexBeyondInt16: a primary past index 32,767 keeps its
// slots (an int16 index wrapped, giving every slot to a slotless
// primary).
func TestTopologyIndexBeyondInt16(t *testing.T) {
	top := NewTopology(make([]Node, 65537))
	top.Assign(0, Slots-1, 65536)
	if o := top.Owner(0); o != 65536 || top.SlotsOf(65536) != Slots || top.SlotsOf(0) != 0 {
		t.Errorf("owner %d; slots of 65536: %d, of 0: %d", o, top.SlotsOf(65536), top.SlotsOf(0))
	}
}

// TestParseShardsOnePrimaryListedTwice: shards naming one primary are one
// node serving their slots (4,000 such shards made 4,000 nodes, each with
// connections and histograms, all talking to one server).
func TestParseShardsOnePrimaryListedTwice(t *testing.T) {
	r := &strings.Builder{}
	shardsReply(4000, 0, "127.0.0.2", 7000)(r)
	v := value(t, r.String())
	// Point every shard at one port.
	for i := range v.Elems {
		nodes := fields(v.Elems[i])["nodes"].Elems
		for k := range nodes[0].Elems {
			if nodes[0].Elems[k].Str == "port" {
				nodes[0].Elems[k+1].Int = 7000
			}
		}
	}
	top, err := parseShards(v, "127.0.0.2", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Primaries) != 1 || top.Primaries[0].Addr != "127.0.0.2:7000" || top.SlotsOf(0) != Slots {
		t.Errorf("%d primaries, the first %+v with %d slots", len(top.Primaries), top.Primaries[0], top.SlotsOf(0))
	}
}
