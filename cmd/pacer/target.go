package main

import (
	"net"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/secret"
	"github.com/pacer-load/pacer/scheduler"
)

// targetOptions reads the target flags (targetFlags) into connection options:
// address, password, TLS. It reads the password from the terminal with
// --askpass.
func targetOptions(c *cli.Context) (conn.Options, error) {
	o := conn.Options{
		User:           c.String("user"),
		Password:       c.String("a"),
		DB:             c.Int("dbnum"),
		RESP3:          c.Bool("3"),
		ClientTracking: c.Bool("enable-tracking"),
		Now:            scheduler.Now,
	}
	if p := c.Int("p"); p < 1 || p > 65535 {
		return o, usageErrorf("-p %d: want a port between 1 and 65535", p)
	}
	if o.DB < 0 {
		return o, usageErrorf("--dbnum %d: must not be negative", o.DB)
	}
	host := ""
	if s := c.String("s"); s != "" {
		o.Network, o.Addr = "unix", s
	} else {
		host = c.String("h")
		o.Network, o.Addr = "tcp", net.JoinHostPort(host, strconv.Itoa(c.Int("p")))
	}
	rediss := false
	if u := c.String("u"); c.IsSet("u") {
		var err error
		if host, rediss, err = o.ApplyURI(u); err != nil {
			return o, err
		}
	}
	if c.Bool("askpass") {
		pw, err := secret.AskPassword(c.App.Reader, c.App.ErrWriter)
		if err != nil {
			return o, usageErrorf("--askpass: %v", err)
		}
		secretsFrom(c.Context).Add(pw)
		o.Password = pw
	}
	if o.User != "" && o.Password == "" {
		return o, usageErrorf("--user needs a password: -a, REDISCLI_AUTH or --askpass")
	}
	var err error
	if o.TLS, err = parseTLS(c, host, rediss); err != nil {
		return o, err
	}
	// Cluster nodes other than the seed are checked against their own
	// host unless --sni names the server (conn.Options.ForAddr).
	o.FixedServerName = o.TLS != nil && c.IsSet("sni")
	return o, nil
}
