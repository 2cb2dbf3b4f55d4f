package main

import (
	"crypto/tls"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/endpoint"
	"github.com/pacer-load/pacer/internal/secret"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/sentinel"
)

// sentinelFlags reach the primary through Redis Sentinel: the sentinels,
// the master's name, the sentinels' own user and password, and whether
// they speak TLS. Every load command has them (targetFlags).
func sentinelFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "sentinel", Usage: "find the primary through the Redis Sentinels at `HOST:PORT`[,HOST:PORT...] (asked in order, a dead one skipped; port 26379 when absent) with --master, and follow its failovers; also -u redis+sentinel://HOST:PORT[,...]/NAME[/DB]", Category: catTarget},
		&cli.StringFlag{Name: "master", Usage: "the `NAME` the sentinels watch the primary under (with --sentinel)", Category: catTarget},
		&cli.StringFlag{Name: "sentinel-user", Usage: "`NAME` for the sentinels' own ACL AUTH (needs --sentinel-pass or --sentinel-askpass)", Category: catTarget},
		&cli.StringFlag{Name: "sentinel-pass", Usage: "`PASSWORD` for the sentinels' own AUTH (-a is the data nodes')", Category: catTarget},
		&cli.BoolFlag{Name: "sentinel-askpass", Usage: "read the sentinels' password from the terminal, unechoed (from stdin's next line when it is not a terminal; after --askpass's)", Category: catTarget},
		&cli.BoolFlag{Name: "sentinel-tls", Usage: "speak TLS to the sentinels, with the TLS flags' certificates (default: as --tls; --sentinel-tls=false for plain sentinels beside TLS data nodes)", Category: catTLS},
	}
}

// echoSentinels records in a document's config how the target was found
// through sentinels: their addresses, the master's name, and as target
// the primary they named at the start (not -h/-p, which do not apply).
func echoSentinels(config map[string]any, t *endpoint.Target) {
	if config == nil || t.Sentinels == nil {
		return
	}
	config["sentinels"], config["master"] = t.Sentinels.Addrs, t.Sentinels.Master
	config["target"] = t.Options.Addr
}

// sentinelOnly are the flags that mean nothing without sentinels.
var sentinelOnly = []string{"master", "sentinel-user", "sentinel-pass", "sentinel-askpass", "sentinel-tls"}

// sentinelTLS reports whether the sentinels speak TLS: --sentinel-tls,
// else as the data nodes (--tls, rediss+sentinel://).
func sentinelTLS(c *cli.Context, dataTLS bool) bool {
	if c.IsSet("sentinel-tls") {
		return c.Bool("sentinel-tls")
	}
	return dataTLS
}

// sentinelURI is -u when it names sentinels (nil otherwise).
func sentinelURI(c *cli.Context) (*sentinel.URI, error) {
	s := c.String("u")
	if !c.IsSet("u") || !sentinel.IsURI(s) {
		return nil, nil
	}
	u, err := sentinel.ParseURI(s)
	if err != nil {
		return nil, usageErrorf("-u: %v", err) // never the URI: it may hold a password
	}
	return &u, nil
}

// parseSentinel reads --sentinel and --master (or a Sentinel -u URI) and
// the sentinels' auth and TLS into the sentinels' configuration; nil when
// the target is reached directly. uri is -u's Sentinel URI (nil: none),
// tlsCfg the TLS flags' configuration (nil: none built).
func parseSentinel(c *cli.Context, uri *sentinel.URI, tlsCfg *tls.Config, dataTLS bool) (*sentinel.Config, error) {
	if !c.IsSet("sentinel") && uri == nil {
		for _, name := range sentinelOnly {
			if c.IsSet(name) {
				return nil, usageErrorf("--%s needs --sentinel (or a redis+sentinel:// URI)", name)
			}
		}
		return nil, nil
	}
	for _, name := range []string{"h", "p", "s"} {
		if c.IsSet(name) {
			return nil, usageErrorf("-%s: the sentinels name the primary; with --sentinel give no -h, -p or -s", name)
		}
	}
	switch {
	case c.Bool("cluster"):
		return nil, usageErrorf("--sentinel watches a primary and its replicas, not a Redis Cluster: drop --cluster")
	case c.Bool("embedded"):
		return nil, usageErrorf("--sentinel needs sentinels: --embedded is a single server")
	}
	cfg := &sentinel.Config{Options: conn.Options{Now: scheduler.Now}}
	if uri != nil {
		if c.IsSet("sentinel") {
			return nil, usageErrorf("--sentinel and a redis+sentinel:// -u both name sentinels: give one")
		}
		cfg.Addrs, cfg.Master = uri.Sentinels, uri.Master
		cfg.Options.User, cfg.Options.Password = uri.SentinelUser, uri.SentinelPassword
	} else {
		addrs, err := sentinel.ParseAddrs(c.String("sentinel"))
		if err != nil {
			return nil, usageErrorf("--sentinel: %v", err)
		}
		cfg.Addrs = addrs
	}
	if c.IsSet("master") {
		if uri != nil {
			return nil, usageErrorf("--master: the redis+sentinel:// URI names the master already")
		}
		cfg.Master = c.String("master")
	}
	if cfg.Master == "" {
		return nil, usageErrorf("--sentinel needs --master NAME: the name the sentinels watch the primary under")
	}
	if c.IsSet("sentinel-user") {
		cfg.Options.User = c.String("sentinel-user")
	}
	if c.IsSet("sentinel-pass") {
		cfg.Options.Password = c.String("sentinel-pass")
	}
	if c.Bool("sentinel-askpass") {
		pw, err := secret.AskPasswordFor(c.Context, c.App.Reader, c.App.ErrWriter, "Please input the sentinels' password: ")
		if err != nil {
			return nil, usageErrorf("--sentinel-askpass: %v", err)
		}
		secretsFrom(c.Context).Add(pw)
		cfg.Options.Password = pw
	}
	if cfg.Options.User != "" && cfg.Options.Password == "" {
		return nil, usageErrorf("--sentinel-user needs a password: --sentinel-pass or --sentinel-askpass")
	}
	secretsFrom(c.Context).Add(cfg.Options.Password)
	if sentinelTLS(c, dataTLS) {
		cfg.Options.TLS = tlsCfg
		cfg.Options.FixedServerName = c.IsSet("sni")
	}
	return cfg, nil
}
