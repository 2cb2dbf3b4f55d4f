package main

import (
	"github.com/urfave/cli/v2"
)

// topologyFlags are run's and sweep's flags about replicas: where reads
// go, and WAIT after writes.
func topologyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "read-from", Value: "primary", Usage: "send reads (the commands the server flags readonly: GET, LRANGE, …) to `WHERE`: primary, replicas (the sentinels' with --sentinel, else the primary's online ones; each shard's with --cluster) or prefer-replicas (the primary while no replica can take them); a row per node shows where they went", Category: catTarget},
		&cli.StringFlag{Name: "wait", Usage: "send WAIT N TIMEOUT after every write, on its connection, and record its latency from the write's intended time (`N[,TIMEOUT]`: 1, 2,100ms; TIMEOUT 0 or none waits for ever); not with --cluster", Category: catLoad},
	}
}

// visibilityFlag is run's --visibility.
func visibilityFlag() cli.Flag {
	return &cli.StringFlag{Name: "visibility", Usage: "beside the test, write `RATE` probes per second on the primary at their intended instants and poll each replica for them: the replication visibility lag per replica (their own connections and counts); not with --cluster", Category: catLoad}
}

// topologyChecks refuses what the topology flags cannot do with the
// target flags: replicas and WAIT of the embedded target, WAIT and probes
// in a cluster.
func topologyChecks(c *cli.Context) error {
	for _, name := range []string{"wait", "visibility"} {
		if !defines(c, name) || !c.IsSet(name) {
			continue
		}
		switch {
		case c.Bool("embedded"):
			return usageErrorf("--%s: the embedded target is a single server, without replicas", name)
		case c.Bool("cluster"):
			return usageErrorf("--%s: for a primary and its replicas, not a Redis Cluster", name)
		}
	}
	return nil
}
