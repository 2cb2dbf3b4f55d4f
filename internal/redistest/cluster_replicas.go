package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// StartClusterWithReplicas starts a Redis Cluster of n primaries with
// per replicas each (`redis-cli --cluster create … --cluster-replicas
// per`): Nodes are the primaries, Replicas the replicas (ReplicaOf says
// whose). It waits until every replica's link is up and every node lists
// every replica, and stops them all at the end of the test.
func StartClusterWithReplicas(t testing.TB, n, per int) *Cluster {
	t.Helper()
	if n < 3 || per < 1 {
		t.Fatalf("StartClusterWithReplicas: want 3 or more primaries and a replica each, not %d and %d", n, per)
	}
	bin := Binary(t, "redis-server")
	cli := Binary(t, "redis-cli")
	c := &Cluster{cli: cli, server: bin}
	all := make([]*Server, n*(1+per))
	for i := range all {
		all[i] = startNode(t, bin, nil)
	}
	args := []string{"--cluster", "create"}
	for _, s := range all {
		args = append(args, s.Addr)
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(per), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v: %s", err, lastLines(string(out), 5))
	}
	// redis-cli makes the first n the primaries; ROLE says for sure.
	for _, s := range all {
		role, err := s.Role()
		if err != nil {
			t.Fatal(err)
		}
		if role == "master" {
			c.Nodes = append(c.Nodes, s)
		} else {
			c.Replicas = append(c.Replicas, s)
		}
	}
	if len(c.Nodes) != n {
		t.Fatalf("redis-cli made %d primaries of %d nodes, want %d", len(c.Nodes), len(all), n)
	}
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.waitReplicas(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// ReplicaOf returns the replicas of primary i.
func (c *Cluster) ReplicaOf(i int) []*Server {
	var out []*Server
	for _, r := range c.Replicas {
		if info, err := r.Info("replication"); err == nil && info["master_port"] == c.Nodes[i].PortString() {
			out = append(out, r)
		}
	}
	return out
}

// waitReplicas waits until every replica's link to its primary is up and
// every node's CLUSTER NODES lists every replica as one.
func (c *Cluster) waitReplicas(ctx context.Context) error {
	why := ""
	for {
		if why = c.replicasUp(); why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster replicas not up: %s", why)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Cluster) replicasUp() string {
	for _, r := range c.Replicas {
		info, err := r.Info("replication")
		if err != nil {
			return err.Error()
		}
		if info["master_link_status"] != "up" {
			return r.Addr + ": master_link_status " + info["master_link_status"]
		}
	}
	for _, s := range append(slices.Clone(c.Nodes), c.Replicas...) {
		nodes, err := s.Do("CLUSTER", "NODES")
		if err != nil {
			return err.Error()
		}
		for _, r := range c.Replicas {
			if !nodeLine(nodes, r.Addr, "slave") {
				return s.Addr + " does not list " + r.Addr + " as a replica"
			}
		}
	}
	return ""
}

// nodeLine reports whether CLUSTER NODES lists addr with flag among its
// flags (and not as failed).
func nodeLine(nodes, addr, flag string) bool {
	for _, l := range strings.Split(nodes, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || !strings.HasPrefix(f[1], addr+"@") {
			continue
		}
		flags := strings.Split(f[2], ",")
		return slices.Contains(flags, flag) && !slices.Contains(flags, "fail")
	}
	return false
}

// Failover makes replica r its primary's replacement (CLUSTER FAILOVER on
// r: the primary stops its clients' writes, r catches up and takes its
// slots) and waits until r is a primary every node agrees on; Nodes and
// Replicas then say so (r where its primary was, the former primary among
// the replicas). Errors are returned, not failed: a test may call it
// during a run.
func (c *Cluster) Failover(ctx context.Context, r *Server) error {
	i := slices.Index(c.Replicas, r)
	if i < 0 {
		return fmt.Errorf("Failover: %s is no replica of the cluster", r.Addr)
	}
	info, err := r.Info("replication")
	if err != nil {
		return err
	}
	k := slices.IndexFunc(c.Nodes, func(s *Server) bool { return s.PortString() == info["master_port"] })
	if k < 0 {
		return fmt.Errorf("Failover: %s replicates no primary of the cluster", r.Addr)
	}
	if _, err := r.Do("CLUSTER", "FAILOVER"); err != nil {
		return fmt.Errorf("CLUSTER FAILOVER on %s: %w", r.Addr, err)
	}
	for {
		role, err := r.Role()
		if err == nil && role == "master" {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not become a primary: %v %v", r.Addr, role, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	c.Nodes[k], c.Replicas[i] = r, c.Nodes[k]
	if err := c.WaitReady(ctx); err != nil {
		return err
	}
	return c.waitReplicas(ctx)
}

// Reshard moves count slots from primary from to primary to with
// `redis-cli --cluster reshard` (keys and all, while the cluster serves:
// clients see -ASK during each slot's move and -MOVED after), and waits
// until every node agrees. Errors are returned, not failed.
func (c *Cluster) Reshard(ctx context.Context, from, to, count int) error {
	src, err := c.Nodes[from].Do("CLUSTER", "MYID")
	if err != nil {
		return err
	}
	dst, err := c.Nodes[to].Do("CLUSTER", "MYID")
	if err != nil {
		return err
	}
	args := append(c.cliTLS(), "--cluster", "reshard", c.Nodes[from].Addr, "--cluster-from", src, "--cluster-to", dst,
		"--cluster-slots", strconv.Itoa(count), "--cluster-yes")
	out, err := exec.CommandContext(ctx, c.cli, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("redis-cli --cluster reshard: %v: %s", err, lastLines(string(out), 5))
	}
	return c.WaitReady(ctx)
}
