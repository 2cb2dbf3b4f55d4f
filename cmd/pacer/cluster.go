package main

import (
	"github.com/urfave/cli/v2"
)

// clusterFlags is redis-benchmark's --cluster, which every load command
// accepts.
func clusterFlags() []cli.Flag {
	return []cli.Flag{&cli.BoolFlag{Name: "cluster", Category: catTarget,
		Usage: "Redis Cluster: -h/-p is a seed; the slot map decides where each request goes (bench and sweep --closed: redis-benchmark's rule, client i on primary i mod N)"}}
}
