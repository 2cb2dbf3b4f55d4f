package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
)

// catTLS groups the TLS flags in help.
const catTLS = "tls"

// tlsFlags are redis-benchmark's TLS flags, with its names, shared by
// every load command.
func tlsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "tls", Usage: "connect with TLS (also: -u rediss://...)", Category: catTLS},
		&cli.StringFlag{Name: "cacert", Usage: "trust the CA certificates of PEM `FILE` instead of the system's", Category: catTLS},
		&cli.StringFlag{Name: "cacertdir", Usage: "trust the CA certificates of every PEM file in `DIR`", Category: catTLS},
		&cli.StringFlag{Name: "cert", Usage: "client certificate PEM `FILE`, for servers that require one (needs --key)", Category: catTLS},
		&cli.StringFlag{Name: "key", Usage: "private key PEM `FILE` of --cert", Category: catTLS},
		&cli.StringFlag{Name: "sni", Usage: "server `NAME` to send and to verify the certificate against", DefaultText: "the host", Category: catTLS},
		&cli.BoolFlag{Name: "insecure", Usage: "do not verify the server's certificate", Category: catTLS},
		&cli.StringFlag{Name: "tls-ciphers", Usage: "TLS 1.2 cipher suites, `LIST` of OpenSSL or IANA names separated by ':'", DefaultText: "Go's", Category: catTLS},
		&cli.StringFlag{Name: "tls-ciphersuites", Usage: "TLS 1.3 suites the server may choose, `LIST` separated by ':' (Go offers all three; another one fails the connection)", DefaultText: "any", Category: catTLS},
	}
}

// tlsSubFlags need --tls (or rediss://).
var tlsSubFlags = []string{"cacert", "cacertdir", "cert", "key", "sni", "insecure", "tls-ciphers", "tls-ciphersuites"}

// embeddedTLSFlags make the embedded target serve TLS.
func embeddedTLSFlags(cat string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "tls-cert", Usage: "serve TLS with the certificate of PEM `FILE` (needs --tls-key)", Category: cat},
		&cli.StringFlag{Name: "tls-key", Usage: "private key PEM `FILE` of --tls-cert", Category: cat},
	}
}

// wantsTLS reports whether the client connects with TLS: --tls, a
// rediss:// URI, or the embedded target serving TLS.
func wantsTLS(c *cli.Context, rediss bool) bool {
	return c.Bool("tls") || rediss || c.Bool("embedded") && (c.IsSet("tls-cert") || c.IsSet("tls-key"))
}

// parseTLS builds the client's TLS configuration from the flags; nil when
// TLS is off. host is the server's host (empty for a unix socket). Every
// file is read here, so a bad one is a usage error before anything runs.
func parseTLS(c *cli.Context, host string, rediss bool) (*tls.Config, error) {
	if !wantsTLS(c, rediss) {
		for _, name := range tlsSubFlags {
			if c.IsSet(name) {
				return nil, usageErrorf("--%s needs --tls (or a rediss:// URI)", name)
			}
		}
		return nil, nil
	}
	if err := givenValues(c, tlsSubFlags...); err != nil {
		return nil, err
	}
	cfg, err := conn.TLSFiles{
		CACert: c.String("cacert"), CACertDir: c.String("cacertdir"),
		Cert: c.String("cert"), Key: c.String("key"),
		SNI: c.String("sni"), Insecure: c.Bool("insecure"),
		Ciphers: c.String("tls-ciphers"), Suites13: c.String("tls-ciphersuites"),
	}.Client(c.Context, host)
	if err != nil {
		return nil, err
	}
	if cfg.InsecureSkipVerify {
		warnInsecure(cfg, c.App.ErrWriter)
	}
	return cfg, nil
}

// warnInsecure makes cfg print insecureWarning on stderr at its first
// completed handshake. Printed then, not while the flags are read, it
// follows no usage error (whose contract is one line), and a server never
// reached is not warned about. crypto/tls calls VerifyConnection on every
// handshake, verified or not; the clones cluster nodes get
// (conn.Options.ForAddr) share the Once, so a command warns once however
// many connections it makes.
func warnInsecure(cfg *tls.Config, stderr io.Writer) {
	var once sync.Once
	verify := cfg.VerifyConnection
	cfg.VerifyConnection = func(st tls.ConnectionState) error {
		once.Do(func() { fmt.Fprintln(stderr, insecureWarning) })
		if verify != nil {
			return verify(st)
		}
		return nil
	}
}

// emptyValue is what an empty value of a TLS flag says: conn reads an
// empty setting as one not given.
var emptyValue = map[string]string{
	"cacert": "give a file", "cacertdir": "give a directory", "cert": "give a file", "key": "give a file",
	"sni": "give a server name", "tls-ciphers": "no cipher named", "tls-ciphersuites": "no suite named",
	"tls-cert": "give a file", "tls-key": "give a file",
}

// givenValues refuses a flag of names set to an empty value.
func givenValues(c *cli.Context, names ...string) error {
	for _, name := range names {
		if why, ok := emptyValue[name]; ok && c.IsSet(name) && c.String(name) == "" {
			return usageErrorf("--%s: %s", name, why)
		}
	}
	return nil
}

// serverTLSFiles reads --tls-cert and --tls-key.
func serverTLSFiles(c *cli.Context) (conn.TLSServerFiles, error) {
	if err := givenValues(c, "tls-cert", "tls-key"); err != nil {
		return conn.TLSServerFiles{}, err
	}
	return conn.TLSServerFiles{Cert: c.String("tls-cert"), Key: c.String("tls-key"), Ctx: c.Context}, nil
}

// insecureWarning is printed once per command with --insecure.
const insecureWarning = "pacer: --insecure: the server's certificate is not verified"
