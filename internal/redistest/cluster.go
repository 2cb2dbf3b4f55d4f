package redistest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/certs"
)

// Cluster is a Redis Cluster of primaries started by StartCluster.
type Cluster struct {
	// Nodes are the primaries, in the order they were started.
	Nodes []*Server
	// Replicas are the replicas of a cluster of StartClusterWithReplicas.
	Replicas []*Server
	// Migrating, when set, is called by MoveSlots for each slot once its
	// keys have moved and before the slot is handed over: meanwhile the
	// source answers -ASK for the slot's keys. Tests use it to look.
	Migrating func(slot int)
	cli       string // redis-cli
	server    string // redis-server
	// tls is set for a cluster of StartTLSCluster: its CA issues each
	// node's certificate, for hosts(i) (node i).
	tls *clusterTLS
}

type clusterTLS struct {
	ca      *certs.CA
	caFile  string
	clients certs.Pair
	hosts   func(i int) []string
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
	return startCluster(t, n, nil)
}

// StartTLSCluster is StartCluster over TLS: every node listens on a TLS
// port only (see Server.TLS) and talks TLS on the cluster bus
// (--tls-cluster yes). Node i's certificate, signed by one CA made for
// the test, is for hosts(i) (nil: 127.0.0.1); Server.Do and Query verify
// 127.0.0.1, so every node's hosts must hold it. A redis-server built
// without TLS skips the test (fails it with PACER_REQUIRE_REDIS=1).
func StartTLSCluster(t testing.TB, n int, hosts func(i int) []string) *Cluster {
	t.Helper()
	ca, err := certs.NewCA("pacer test cluster CA")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ca.Client("pacer test client")
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, ca.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if hosts == nil {
		hosts = func(int) []string { return []string{"127.0.0.1"} }
	}
	return startCluster(t, n, &clusterTLS{ca: ca, caFile: caFile, clients: cl, hosts: hosts})
}

// CA is the PEM file of the CA that signed a TLS cluster's certificates
// ("" for a plain cluster).
func (c *Cluster) CA() string {
	if c.tls == nil {
		return ""
	}
	return c.tls.caFile
}

func startCluster(t testing.TB, n int, ct *clusterTLS) *Cluster {
	t.Helper()
	if n < 3 {
		t.Fatalf("StartCluster: redis-cli --cluster create needs at least 3 primaries, not %d", n)
	}
	bin := Binary(t, "redis-server")
	cli := Binary(t, "redis-cli")
	c := &Cluster{cli: cli, server: bin, tls: ct}
	for range n {
		c.Nodes = append(c.Nodes, c.StartNode(t))
	}
	args := append(c.cliTLS(), "--cluster", "create")
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

func startNode(t testing.TB, bin string, tf *TLSFiles) *Server {
	t.Helper()
	return startOnFreePort(t, bin, tf, "redis-server in cluster mode", func() []string {
		bus, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		extra := []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", strconv.Itoa(bus), "--cluster-node-timeout", "5000"}
		if tf != nil {
			// The bus always asks for a client certificate: the server's
			// is for server authentication only.
			extra = append(extra, "--tls-cluster", "yes", "--tls-replication", "yes",
				"--tls-client-cert-file", tf.ClientCert, "--tls-client-key-file", tf.ClientKey)
		}
		return extra
	})
}

// StartNode starts one more cluster-enabled redis-server (over TLS for a
// TLS cluster), in no cluster yet (see Join), and stops it at the end of
// the test.
func (c *Cluster) StartNode(t testing.TB) *Server {
	t.Helper()
	if c.tls == nil {
		return startNode(t, c.server, nil)
	}
	ct := c.tls
	srv, err := ct.ca.Server(ct.hosts(len(c.Nodes))...)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := &TLSFiles{Files: certs.Files{CA: ct.caFile, ServerCert: filepath.Join(dir, "server.crt"), ServerKey: filepath.Join(dir, "server.key"),
		ClientCert: filepath.Join(dir, "client.crt"), ClientKey: filepath.Join(dir, "client.key")}}
	for _, w := range []struct {
		path string
		data []byte
	}{{f.ServerCert, srv.CertPEM}, {f.ServerKey, srv.KeyPEM}, {f.ClientCert, ct.clients.CertPEM}, {f.ClientKey, ct.clients.KeyPEM}} {
		if err := os.WriteFile(w.path, w.data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if f.Client, err = clientConfig(f.Files); err != nil {
		t.Fatal(err)
	}
	return startNode(t, c.server, f)
}

// cliTLS are redis-cli's arguments to reach the nodes.
func (c *Cluster) cliTLS() []string {
	if c.tls == nil {
		return nil
	}
	return []string{"--tls", "--cacert", c.tls.caFile}
}

// Join adds s, a node of StartNode, to the cluster as a primary without
// slots (`redis-cli --cluster add-node`), waits until every node agrees,
// and appends it to Nodes; MoveSlots can then give it slots, as a
// scale-out does. It returns errors rather than failing the test, so a
// test may call it from another goroutine during a run (and read Nodes
// after that goroutine ends).
func (c *Cluster) Join(ctx context.Context, s *Server) error {
	args := append(c.cliTLS(), "--cluster", "add-node", s.Addr, c.Addr())
	out, err := exec.CommandContext(ctx, c.cli, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("redis-cli --cluster add-node %s: %v: %s", s.Addr, err, lastLines(string(out), 5))
	}
	c.Nodes = append(c.Nodes, s)
	// Every node must know every other (CLUSTER SETSLOT names them by ID)
	// and agree on the slots.
	for {
		known, why := c.acquainted()
		if known {
			return c.WaitReady(ctx)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s did not join: %s", s.Addr, why)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// acquainted reports whether every node's CLUSTER NODES lists every node
// of c, and if not why.
func (c *Cluster) acquainted() (bool, string) {
	ids := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		id, err := s.Do("CLUSTER", "MYID")
		if err != nil {
			return false, err.Error()
		}
		ids[i] = id
	}
	for _, s := range c.Nodes {
		nodes, err := s.Do("CLUSTER", "NODES")
		if err != nil {
			return false, err.Error()
		}
		for i, id := range ids {
			if !strings.Contains(nodes, id) {
				return false, s.Addr + " does not know " + c.Nodes[i].Addr
			}
		}
	}
	return true, ""
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
	q, err := s.open()
	if err != nil {
		return nil, err
	}
	defer q.Close()
	return q.query(args...)
}

// Pipeline sends cmds on one connection, writing them all before it
// reads a reply, and returns the first error, an error reply included.
func (s *Server) Pipeline(cmds ...[]string) error {
	q, err := s.open()
	if err != nil {
		return err
	}
	defer q.Close()
	var b strings.Builder
	for _, args := range cmds {
		encode(&b, args)
	}
	written := make(chan error, 1)
	go func() { // replies are read meanwhile: neither side's buffer fills
		_, err := io.WriteString(q.c, b.String())
		written <- err
	}()
	var first error
	for range cmds {
		if _, first = readAny(q.r); first != nil {
			q.Close() // the writer may wait on a server that stopped reading
			break
		}
	}
	if err := <-written; err != nil && first == nil {
		first = err
	}
	return first
}

// A session is one connection to a server for several commands.
type session struct {
	c net.Conn
	r *bufio.Reader
}

// open connects to s (authenticated when it has a password) for 30 s at
// most.
func (s *Server) open() (*session, error) {
	c, err := s.dial()
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	q := &session{c: c, r: bufio.NewReader(c)}
	if s.password != "" {
		if _, err := roundTrip(c, q.r, s.auth()...); err != nil {
			c.Close()
			return nil, err
		}
	}
	return q, nil
}

func (q *session) query(args ...string) (any, error) {
	var b strings.Builder
	encode(&b, args)
	if _, err := io.WriteString(q.c, b.String()); err != nil {
		return nil, err
	}
	return readAny(q.r)
}

func (q *session) Close() error { return q.c.Close() }

// encode appends one command in RESP.
func encode(b *strings.Builder, args []string) {
	fmt.Fprintf(b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(b, "$%d\r\n%s\r\n", len(a), a)
	}
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
// to while the cluster serves, with the steps of redis-cli --cluster
// reshard taken for all the slots at once: CLUSTER SETSLOT IMPORTING on
// the target and MIGRATING on the source, MIGRATE of each slot's keys in
// batches, then SETSLOT NODE on the target, the source and every other
// node (each step one pipeline a node: a slot at a time, a connection a
// command, took tens of seconds on a loaded machine). Clients see -ASK
// for the slots' keys during the move and -MOVED after. It returns when
// every node agrees.
func (c *Cluster) MoveSlots(ctx context.Context, from, to, count int) error {
	if from == to || from < 0 || to < 0 || from >= len(c.Nodes) || to >= len(c.Nodes) {
		return fmt.Errorf("MoveSlots: bad nodes %d -> %d", from, to)
	}
	src, dst := c.Nodes[from], c.Nodes[to]
	moving, dstID, err := c.markMigrating(from, to, count)
	if err != nil {
		return err
	}
	// The keys move slot by slot, over one connection.
	q, err := src.open()
	if err != nil {
		return err
	}
	defer q.Close()
	for _, slot := range moving {
		if err := ctx.Err(); err != nil {
			return err
		}
		sl := strconv.Itoa(slot)
		for {
			v, err := q.query("CLUSTER", "GETKEYSINSLOT", sl, "100")
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
			if _, err := q.query(args...); err != nil {
				return fmt.Errorf("MIGRATE slot %s: %w", sl, err)
			}
		}
		if c.Migrating != nil {
			c.Migrating(slot)
		}
	}
	// Then they are handed over: the target first, then the source and
	// every other node.
	for _, s := range append([]*Server{dst, src}, c.others(from, to)...) {
		if err := s.Pipeline(setSlots(moving, "NODE", dstID)...); err != nil {
			return fmt.Errorf("SETSLOT NODE on %s: %w", s.Addr, err)
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

// MarkMigrating marks every slot node from owns as being migrated to node
// to (IMPORTING there, MIGRATING on from) and moves no key, so from
// answers -ASK to every command on a key it does not hold, for as long as
// the cluster runs.
func (c *Cluster) MarkMigrating(from, to int) error {
	_, _, err := c.markMigrating(from, to, -1)
	return err
}

// markMigrating marks the first count slots node from owns (all of them
// when count < 0) as being migrated to node to, in one pipeline a node:
// from then on from answers -ASK for their keys it does not hold. It
// returns the slots and the target's node ID.
func (c *Cluster) markMigrating(from, to, count int) (slots []int, dstID string, err error) {
	src, dst := c.Nodes[from], c.Nodes[to]
	srcID, err := src.Do("CLUSTER", "MYID")
	if err != nil {
		return nil, "", err
	}
	if dstID, err = dst.Do("CLUSTER", "MYID"); err != nil {
		return nil, "", err
	}
	if slots, err = c.owned(from); err != nil {
		return nil, "", err
	}
	if count >= 0 {
		if len(slots) < count {
			return nil, "", fmt.Errorf("MoveSlots: node %d owns %d slots, not %d", from, len(slots), count)
		}
		slots = slots[:count]
	}
	if err := dst.Pipeline(setSlots(slots, "IMPORTING", srcID)...); err != nil {
		return nil, "", fmt.Errorf("SETSLOT IMPORTING on %s: %w", dst.Addr, err)
	}
	if err := src.Pipeline(setSlots(slots, "MIGRATING", dstID)...); err != nil {
		return nil, "", fmt.Errorf("SETSLOT MIGRATING on %s: %w", src.Addr, err)
	}
	return slots, dstID, nil
}

// setSlots is CLUSTER SETSLOT slot state node for each slot.
func setSlots(slots []int, state, node string) [][]string {
	cmds := make([][]string, len(slots))
	for i, slot := range slots {
		cmds[i] = []string{"CLUSTER", "SETSLOT", strconv.Itoa(slot), state, node}
	}
	return cmds
}
