package main

import (
	"github.com/urfave/cli/v2"
)

// topologyFlags are run's and sweep's flags about replicas: where reads
// go.
func topologyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "read-from", Value: "primary", Usage: "send reads (the commands the server flags readonly: GET, LRANGE, …) to `WHERE`: primary, replicas (the sentinels' with --sentinel, else the primary's online ones; each shard's with --cluster) or prefer-replicas (the primary while no replica can take them); a row per node shows where they went", Category: catTarget},
	}
}
