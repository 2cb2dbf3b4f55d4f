package main

import (
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
)

// faultFlags configure the embedded server's fault injection.
func faultFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "stall", Usage: "freeze the embedded server for `DURATION`, every --every (as a GC pause or fork would)", Category: catEmbedded},
		&cli.DurationFlag{Name: "every", Usage: "stall every `DURATION`", Category: catEmbedded},
		&cli.StringFlag{Name: "delay", Usage: "extra service time per command: `SPEC` is a duration (200us), exp:MEAN or uniform:MIN-MAX; commands run one at a time", Category: catEmbedded},
		&cli.Float64Flag{Name: "error-rate", Usage: "`FRACTION` of commands answered with an error reply", Category: catEmbedded},
	}
}

// embeddedFlags add --embedded to a load command.
func embeddedFlags() []cli.Flag {
	fl := append([]cli.Flag{
		&cli.BoolFlag{Name: "embedded", Usage: "start an in-process RESP server on a free loopback port and target it (no Redis needed); with --tls it serves TLS, with -a it requires the password", Category: catEmbedded},
	}, faultFlags()...)
	return append(fl, embeddedTLSFlags(catEmbedded)...)
}

// parseFaults reads the fault flags.
func parseFaults(c *cli.Context) (embedded.Faults, error) {
	f := embedded.Faults{Stall: c.Duration("stall"), Every: c.Duration("every"), ErrorRate: c.Float64("error-rate"), Seed: uint64(time.Now().UnixNano())}
	if c.IsSet("seed") {
		f.Seed = c.Uint64("seed")
	}
	if s := c.String("delay"); s != "" {
		d, err := embedded.ParseDelay(s)
		if err != nil {
			return f, usageErrorf("%v", err)
		}
		f.Delay = d
	}
	if err := f.Validate(); err != nil {
		return f, usageErrorf("%v", err)
	}
	return f, nil
}

// startEmbedded starts the embedded server when --embedded is set and
// points o at it. Fault flags without --embedded are a usage error. The
// returned stop is never nil.
func startEmbedded(c *cli.Context, o *conn.Options, banner io.Writer) (*embedded.Server, func(), error) {
	faults, err := parseFaults(c)
	if err != nil {
		return nil, func() {}, err
	}
	if !c.Bool("embedded") {
		for _, name := range []string{"stall", "every", "delay", "error-rate"} {
			if c.IsSet(name) {
				return nil, func() {}, usageErrorf("--%s needs --embedded (faults are injected by the embedded target)", name)
			}
		}
		for _, name := range []string{"tls-cert", "tls-key"} {
			if c.IsSet(name) {
				return nil, func() {}, usageErrorf("--%s needs --embedded (the embedded target serves TLS; pacer serve does too)", name)
			}
		}
		return nil, func() {}, nil
	}
	for _, name := range []string{"h", "p", "s", "u"} {
		if c.IsSet(name) {
			return nil, func() {}, usageErrorf("--embedded targets its own server: drop -%s", name)
		}
	}
	// The embedded target serves what the client asks for: TLS with a
	// certificate the client trusts, and the client's password.
	files, err := serverTLSFiles(c)
	if err != nil {
		return nil, func() {}, err
	}
	serverTLS, err := files.Trusted(o.TLS)
	if err != nil {
		return nil, func() {}, err
	}
	srv, err := embedded.Start(embedded.Config{Faults: faults, TLS: serverTLS, User: o.User, Password: o.Password})
	if err != nil {
		return nil, func() {}, failed(fmt.Errorf("start the embedded target: %w", err))
	}
	o.Network, o.Addr = "tcp", srv.Addr()
	if banner != nil {
		fmt.Fprintf(banner, "embedded target on %s (%s)\n", srv.Addr(), srv.Describe())
	}
	return srv, func() { srv.Close() }, nil
}
