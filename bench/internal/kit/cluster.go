package kit

import (
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Cluster is a Redis Cluster of primaries started by StartCluster.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts n ≥ 3 primaries in cluster mode (each with its bus
// on a free port of its own), joins them with redis-cli --cluster create
// and waits until every node says cluster_state:ok.
func StartCluster(n int) (*Cluster, error) {
	c := &Cluster{}
	var addrs []string
	for range n {
		bus, err := freePort()
		if err != nil {
			c.Stop()
			return nil, err
		}
		s, err := Start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port", bus)
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	out, err := exec.Command("redis-cli", append(args, "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		c.Stop()
		return nil, fmt.Errorf("redis-cli --cluster create: %v: %s", err, out)
	}
	for range 600 {
		ok := true
		for _, s := range c.Nodes {
			info, err := exec.Command("redis-cli", "-p", s.Port, "cluster", "info").Output()
			if err != nil || !strings.Contains(string(info), "cluster_state:ok") {
				ok = false
				break
			}
		}
		if ok {
			return c, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.Stop()
	return nil, fmt.Errorf("cluster of %d did not reach cluster_state:ok", n)
}

// FlushAll empties every node (FLUSHALL).
func (c *Cluster) FlushAll() error {
	for _, s := range c.Nodes {
		if out, err := exec.Command("redis-cli", "-p", s.Port, "flushall").CombinedOutput(); err != nil {
			return fmt.Errorf("FLUSHALL on %s: %v: %s", s.Addr, err, out)
		}
	}
	return nil
}

// Stop stops every node.
func (c *Cluster) Stop() {
	for _, s := range c.Nodes {
		s.Stop()
	}
}
