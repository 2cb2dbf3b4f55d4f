package redistest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of primaries started by StartCluster.
type Cluster struct {
	// Nodes are the primaries, in the order they were started.
	Nodes []*Server
	// Migrating, when set, is called by MoveSlots for each slot once its
	// keys have moved and before the slot is handed over: meanwhile the
	// source answers -ASK for the slot's keys. Tests use it to look.
	Migrating func(slot int)
}

// Addr returns a seed address (the first node's).
func (c *Cluster) Addr() string { return c.Nodes[0].Addr }

// Addrs returns every primary's address.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		a[i] = n.Addr
	}
	return a
}

// StartCluster starts n primaries (redis-server --cluster-enabled yes, each
// on a free loopback port with its bus on another, its own directory for
// nodes.conf), joins them with `redis-cli --cluster create ...
// --cluster-replicas 0 --cluster-yes`, waits until every node reports
// cluster_state:ok and they agree on the slot map, and stops them at the
// end of the test. redis-cli needs n ≥ 3. It skips the test when
// redis-server or redis-cli is missing (fails it with
// PACER_REQUIRE_REDIS=1).
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	if n < 3 {
		t.Fatalf("StartCluster: redis-cli --cluster create needs at least 3 primaries, not %d", n)
	}
	bin := Binary(t, "redis-server")
	cli := Binary(t, "redis-cli")
	c := &Cluster{}
	for range n {
		c.Nodes = append(c.Nodes, startNode(t, bin))
	}
	args := []string{"--cluster", "create"}
	args = append(args, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v: %s", err, lastLines(string(out), 5))
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

func startNode(t testing.TB, bin string) *Server {
	t.Helper()
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		bus, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		extra := []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", strconv.Itoa(bus), "--cluster-node-timeout", "5000"}
		s, err := start(bin, port, t.TempDir(), extra, nil)
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		lastErr = err
	}
	t.Fatalf("start redis-server in cluster mode: %v", lastErr)
	return nil
}

// WaitReady waits until every node says cluster_state:ok and all of them
// report the same slot map (CLUSTER SLOTS).
func (c *Cluster) WaitReady(ctx context.Context) error {
	var last string
	for {
		last = c.readiness()
		if last == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster not ready: %s", last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// readiness returns why the cluster is not ready, "" when it is.
func (c *Cluster) readiness() string {
	var first string
	for i, s := range c.Nodes {
		info, err := s.Do("CLUSTER", "INFO")
		if err != nil {
			return err.Error()
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return s.Addr + " is not in cluster_state:ok"
		}
		v, err := s.Query("CLUSTER", "SLOTS")
		if err != nil {
			return err.Error()
		}
		m := slotMap(v)
		if i == 0 {
			first = m
		} else if m != first {
			return s.Addr + " disagrees on the slot map"
		}
	}
	return ""
}

// slotMap is CLUSTER SLOTS as a sorted "lo-hi=primary" list.
func slotMap(v any) string {
	var rs []string
	arr, _ := v.([]any)
	for _, r := range arr {
		e, _ := r.([]any)
		if len(e) < 3 {
			continue
		}
		n, _ := e[2].([]any)
		if len(n) < 2 {
			continue
		}
		rs = append(rs, fmt.Sprintf("%v-%v=%v:%v", e[0], e[1], n[0], n[1]))
	}
	sort.Strings(rs)
	return strings.Join(rs, ",")
}

// Query sends one command and returns the whole reply: string (simple and
// bulk strings), int64, []any, nil; an error reply is an error. A test
// helper, not a client.
func (s *Server) Query(args ...string) (any, error) {
	var d net.Dialer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	if s.password != "" {
		if _, err := roundTrip(c, r, "AUTH", s.password); err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c, b.String()); err != nil {
		return nil, err
	}
	return readAny(r)
}

func readAny(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return nil, fmt.Errorf("empty reply line")
	}
	switch line[0] {
	case '-':
		return nil, fmt.Errorf("%s", line[1:])
	case '+':
		return line[1:], nil
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, 0, n)
		for range n {
			e, err := readAny(r)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected reply %q", line)
}

// owned returns the slots node i owns, ascending, per its CLUSTER SLOTS.
func (c *Cluster) owned(i int) ([]int, error) {
	v, err := c.Nodes[i].Query("CLUSTER", "SLOTS")
	if err != nil {
		return nil, err
	}
	arr, _ := v.([]any)
	var slots []int
	for _, r := range arr {
		e, _ := r.([]any)
		if len(e) < 3 {
			continue
		}
		n, _ := e[2].([]any)
		if len(n) < 2 || n[1] != int64(c.Nodes[i].Port) {
			continue
		}
		lo, _ := e[0].(int64)
		hi, _ := e[1].(int64)
		for s := lo; s <= hi; s++ {
			slots = append(slots, int(s))
		}
	}
	sort.Ints(slots)
	return slots, nil
}

// MoveSlots migrates count slots owned by node from (its lowest) to node
// to while the cluster serves, the way redis-cli --cluster reshard does:
// CLUSTER SETSLOT IMPORTING on the target and MIGRATING on the source,
// MIGRATE of the slot's keys in batches, then SETSLOT NODE on the target,
// the source and every other node. Clients see -ASK for the slot's keys
// during the move and -MOVED after. It returns when every node agrees.
func (c *Cluster) MoveSlots(ctx context.Context, from, to, count int) error {
	if from == to || from < 0 || to < 0 || from >= len(c.Nodes) || to >= len(c.Nodes) {
		return fmt.Errorf("MoveSlots: bad nodes %d -> %d", from, to)
	}
	src, dst := c.Nodes[from], c.Nodes[to]
	srcID, err := src.Do("CLUSTER", "MYID")
	if err != nil {
		return err
	}
	dstID, err := dst.Do("CLUSTER", "MYID")
	if err != nil {
		return err
	}
	slots, err := c.owned(from)
	if err != nil {
		return err
	}
	if len(slots) < count {
		return fmt.Errorf("MoveSlots: node %d owns %d slots, not %d", from, len(slots), count)
	}
	for _, slot := range slots[:count] {
		if err := ctx.Err(); err != nil {
			return err
		}
		sl := strconv.Itoa(slot)
		if _, err := dst.Do("CLUSTER", "SETSLOT", sl, "IMPORTING", srcID); err != nil {
			return fmt.Errorf("SETSLOT %s IMPORTING: %w", sl, err)
		}
		if _, err := src.Do("CLUSTER", "SETSLOT", sl, "MIGRATING", dstID); err != nil {
			return fmt.Errorf("SETSLOT %s MIGRATING: %w", sl, err)
		}
		for {
			v, err := src.Query("CLUSTER", "GETKEYSINSLOT", sl, "100")
			if err != nil {
				return fmt.Errorf("GETKEYSINSLOT %s: %w", sl, err)
			}
			keys, _ := v.([]any)
			if len(keys) == 0 {
				break
			}
			args := []string{"MIGRATE", "127.0.0.1", dst.PortString(), "", "0", "5000", "REPLACE", "KEYS"}
			for _, k := range keys {
				args = append(args, fmt.Sprint(k))
			}
			if _, err := src.Do(args...); err != nil {
				return fmt.Errorf("MIGRATE slot %s: %w", sl, err)
			}
		}
		if c.Migrating != nil {
			c.Migrating(slot)
		}
		for _, s := range append([]*Server{dst, src}, c.others(from, to)...) {
			if _, err := s.Do("CLUSTER", "SETSLOT", sl, "NODE", dstID); err != nil {
				return fmt.Errorf("SETSLOT %s NODE on %s: %w", sl, s.Addr, err)
			}
		}
	}
	return c.WaitReady(ctx)
}

func (c *Cluster) others(a, b int) []*Server {
	var o []*Server
	for i, s := range c.Nodes {
		if i != a && i != b {
			o = append(o, s)
		}
	}
	return o
}
