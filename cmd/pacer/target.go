package main

import (
	"net"
	"net/url"
	"strconv"
	"strings"

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
		if host, rediss, err = applyURI(&o, u); err != nil {
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

// applyURI reads redis-benchmark's -u redis://[user:password@]host[:port][/db],
// or rediss:// for TLS, and returns the host and whether it was rediss.
func applyURI(o *conn.Options, s string) (host string, rediss bool, err error) {
	u, perr := url.Parse(s)
	if perr != nil || u.Host == "" {
		// Not echoed: it may hold a password.
		return "", false, usageErrorf("-u: want redis[s]://[user:password@]host[:port][/db]")
	}
	shown := u.Redacted() // never echo the password
	switch u.Scheme {
	case "redis":
	case "rediss":
		rediss = true
	default:
		return "", false, usageErrorf("-u %q: want the redis:// or rediss:// (TLS) scheme", shown)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "6379"
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", false, usageErrorf("-u %q: want a port between 1 and 65535", shown)
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
			return "", false, usageErrorf("-u %q: bad database number %q", shown, db)
		}
		o.DB = n
	}
	return host, rediss, nil
}
