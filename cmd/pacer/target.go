package main

import (
	"net"
	"os"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/internal/secret"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/sentinel"
)

// destination is where a load command sends: the target's connection
// options, the sentinels that name its primary, this process's part of a
// sharded timeline and whether the target is a Redis Cluster.
type destination struct {
	target    conn.Options
	sentinels *sentinel.Config     // --sentinel, redis+sentinel://; nil: the target itself
	shard     *scheduler.Placement // --shard, --start-at, --start-in; nil unsharded
	cluster   bool                 // --cluster
}

// parseDestination reads the target flags, the shard flags and --cluster,
// which the embedded target (a single server) cannot serve.
func parseDestination(c *cli.Context) (destination, error) {
	var d destination
	var err error
	if d.target, d.sentinels, err = targetOptions(c); err != nil {
		return d, err
	}
	if d.shard, err = parseShard(c, os.LookupEnv, time.Now()); err != nil {
		return d, err
	}
	if d.cluster = c.Bool("cluster"); d.cluster && c.Bool("embedded") {
		return d, usageErrorf("--cluster needs a Redis Cluster: --embedded is a single server")
	}
	return d, nil
}

// newTarget is the target a command's runEnv starts from (openEnv points
// it at the embedded target, when there is one).
func (d destination) newTarget() *endpoint.Target {
	return &endpoint.Target{Options: d.target, Cluster: d.cluster, Sentinels: d.sentinels}
}

// targetOptions reads the target flags (targetFlags) into connection options:
// address, password, TLS, and the sentinels' configuration when the
// primary is found through Redis Sentinel (nil otherwise). It reads the
// password from the terminal with --askpass (and the sentinels' with
// --sentinel-askpass).
func targetOptions(c *cli.Context) (conn.Options, *sentinel.Config, error) {
	o := conn.Options{
		User:           c.String("user"),
		Password:       c.String("a"),
		DB:             c.Int("dbnum"),
		RESP3:          c.Bool("3"),
		ClientTracking: c.Bool("enable-tracking"),
		Now:            scheduler.Now,
	}
	if p := c.Int("p"); p < 1 || p > 65535 {
		return o, nil, usageErrorf("-p %d: want a port between 1 and 65535", p)
	}
	if o.DB < 0 {
		return o, nil, usageErrorf("--dbnum %d: must not be negative", o.DB)
	}
	host := ""
	if s := c.String("s"); s != "" {
		o.Network, o.Addr = "unix", s
	} else {
		host = c.String("h")
		o.Network, o.Addr = "tcp", net.JoinHostPort(host, strconv.Itoa(c.Int("p")))
	}
	rediss := false
	suri, err := sentinelURI(c)
	if err != nil {
		return o, nil, err
	}
	if u := c.String("u"); c.IsSet("u") {
		switch {
		case suri != nil: // the data nodes' user, password and database
			o.User, o.Password, o.DB, rediss = suri.User, suri.Password, suri.DB, suri.TLS
		default:
			if host, rediss, err = o.ApplyURI(u); err != nil {
				return o, nil, err
			}
		}
	}
	if c.Bool("askpass") {
		pw, err := secret.AskPassword(c.Context, c.App.Reader, c.App.ErrWriter)
		if err != nil {
			return o, nil, usageErrorf("--askpass: %v", err)
		}
		secretsFrom(c.Context).Add(pw)
		o.Password = pw
	}
	if o.User != "" && o.Password == "" {
		return o, nil, usageErrorf("--user needs a password: -a, REDISCLI_AUTH or --askpass")
	}
	// The TLS flags serve the sentinels too (--sentinel-tls without
	// --tls: plain data nodes, TLS sentinels).
	dataTLS := wantsTLS(c, rediss)
	sentinels := c.IsSet("sentinel") || suri != nil
	tlsCfg, err := parseTLS(c, host, rediss || sentinels && sentinelTLS(c, dataTLS))
	if err != nil {
		return o, nil, err
	}
	if dataTLS {
		o.TLS = tlsCfg
	}
	// Cluster nodes other than the seed are checked against their own
	// host unless --sni names the server (conn.Options.ForAddr).
	o.FixedServerName = o.TLS != nil && c.IsSet("sni")
	sc, err := parseSentinel(c, suri, tlsCfg, dataTLS)
	return o, sc, err
}
