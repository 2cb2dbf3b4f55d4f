package main

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/scheduler"
)

// target reads the target flags (targetFlags) into connection options,
// refusing the cluster and TLS flags.
func target(c *cli.Context) (conn.Options, error) {
	o := conn.Options{
		User:           c.String("user"),
		Password:       c.String("a"),
		DB:             c.Int("dbnum"),
		RESP3:          c.Bool("3"),
		ClientTracking: c.Bool("enable-tracking"),
		Now:            scheduler.Now,
	}
	if err := checkUnsupported(c); err != nil {
		return o, err
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
	if u := c.String("u"); c.IsSet("u") {
		if err := applyURI(&o, u); err != nil {
			return o, err
		}
	}
	return o, nil
}

// applyURI reads redis-benchmark's -u redis://[user:password@]host[:port][/db].
func applyURI(o *conn.Options, s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		// Not echoed: it may hold a password.
		return usageErrorf("-u: want redis://[user:password@]host[:port][/db]")
	}
	shown := u.Redacted() // never echo the password
	switch u.Scheme {
	case "redis":
	case "rediss":
		return usageErrorf("-u %q: TLS (rediss://) is not supported yet", shown)
	default:
		return usageErrorf("-u %q: want the redis:// scheme", shown)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "6379"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return usageErrorf("-u %q: want a port between 1 and 65535", shown)
	}
	o.Network, o.Addr = "tcp", net.JoinHostPort(host, port)
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			o.User, o.Password = u.User.Username(), pw
		} else {
			o.Password = u.User.Username() // redis://password@host
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return usageErrorf("-u %q: bad database number %q", shown, db)
		}
		o.DB = n
	}
	return nil
}
