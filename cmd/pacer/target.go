package main

import (
	"net"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/scheduler"
)

// targetFlags are redis-benchmark's connection flags, with its names and
// defaults.
func targetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "h", Value: "127.0.0.1", Usage: "server `HOST`name", Category: "target"},
		&cli.IntFlag{Name: "p", Value: 6379, Usage: "server `PORT`", Category: "target"},
		&cli.StringFlag{Name: "s", Usage: "server `SOCKET` (overrides host and port)", Category: "target"},
		&cli.StringFlag{Name: "a", Usage: "`PASSWORD` for AUTH", Category: "target", EnvVars: []string{"REDISCLI_AUTH"}},
		&cli.StringFlag{Name: "user", Usage: "`USERNAME` for ACL AUTH (needs -a)", Category: "target"},
		&cli.IntFlag{Name: "dbnum", Value: 0, Usage: "SELECT the `DB` number", Category: "target"},
		&cli.BoolFlag{Name: "3", Usage: "start the session in RESP3 protocol mode (HELLO 3)", Category: "target"},
	}
}

// target reads the target flags into connection options.
func target(c *cli.Context) (conn.Options, error) {
	o := conn.Options{
		User:     c.String("user"),
		Password: c.String("a"),
		DB:       c.Int("dbnum"),
		RESP3:    c.Bool("3"),
		Now:      scheduler.Now,
	}
	if p := c.Int("p"); p < 1 || p > 65535 {
		return o, usageErrorf("-p %d: want a port between 1 and 65535", p)
	}
	if o.DB < 0 {
		return o, usageErrorf("--dbnum %d: must not be negative", o.DB)
	}
	if o.User != "" && o.Password == "" {
		return o, usageErrorf("--user needs a password with -a")
	}
	if s := c.String("s"); s != "" {
		o.Network, o.Addr = "unix", s
	} else {
		o.Network, o.Addr = "tcp", net.JoinHostPort(c.String("h"), strconv.Itoa(c.Int("p")))
	}
	return o, nil
}
