package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/internal/certs"
	"github.com/pacer-load/pacer/scheduler"
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
	cfg := &tls.Config{
		ServerName:         host,
		InsecureSkipVerify: c.Bool("insecure"),
		MinVersion:         tls.VersionTLS12,
	}
	if c.IsSet("sni") {
		if cfg.ServerName = c.String("sni"); cfg.ServerName == "" {
			return nil, usageErrorf("--sni: give a server name")
		}
	}
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		return nil, usageErrorf("TLS over a unix socket needs --sni NAME (the name its certificate is for) or --insecure")
	}
	if c.IsSet("cacert") || c.IsSet("cacertdir") {
		pool := x509.NewCertPool()
		if f := c.String("cacert"); c.IsSet("cacert") {
			n, err := addPEMFile(pool, f)
			if err != nil {
				return nil, usageErrorf("--cacert %s: %v", f, err)
			}
			if n == 0 {
				return nil, usageErrorf("--cacert %s: no PEM certificate in it", f)
			}
		}
		if dir := c.String("cacertdir"); c.IsSet("cacertdir") {
			if err := addPEMDir(pool, dir); err != nil {
				return nil, usageErrorf("--cacertdir %s: %v", dir, err)
			}
		}
		cfg.RootCAs = pool
	}
	certFile, keyFile := c.String("cert"), c.String("key")
	switch {
	case c.IsSet("cert") != c.IsSet("key"):
		return nil, usageErrorf("--cert and --key go together: give both")
	case c.IsSet("cert"):
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, usageErrorf("--cert %s --key %s: %v", certFile, keyFile, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if c.IsSet("tls-ciphers") {
		ids, err := parseCiphers(c.String("tls-ciphers"))
		if err != nil {
			return nil, usageErrorf("--tls-ciphers: %v", err)
		}
		cfg.CipherSuites = ids
	}
	if c.IsSet("tls-ciphersuites") {
		allowed, err := parseSuites13(c.String("tls-ciphersuites"))
		if err != nil {
			return nil, usageErrorf("--tls-ciphersuites: %v", err)
		}
		cfg.VerifyConnection = func(st tls.ConnectionState) error {
			if st.Version == tls.VersionTLS13 && !allowed[st.CipherSuite] {
				return fmt.Errorf("the server chose %s, which --tls-ciphersuites leaves out (Go offers every TLS 1.3 suite: restrict them on the server)", tls.CipherSuiteName(st.CipherSuite))
			}
			return nil
		}
	}
	return cfg, nil
}

// addPEMFile adds the certificates of a PEM file to pool and returns how
// many it held.
func addPEMFile(pool *x509.CertPool, path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, unwrapPath(err)
	}
	n := 0
	for _, cert := range pemCerts(b) {
		pool.AddCert(cert)
		n++
	}
	return n, nil
}

// pemCerts parses the CERTIFICATE blocks of a PEM text, skipping others.
func pemCerts(b []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return out
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if cert, err := x509.ParseCertificate(block.Bytes); err == nil {
			out = append(out, cert)
		}
	}
}

// addPEMDir adds the certificates of every file of dir (OpenSSL's hashed
// links included); files that hold none are skipped, but the directory
// must hold at least one.
func addPEMDir(pool *x509.CertPool, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return unwrapPath(err)
	}
	n := 0
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		k, err := addPEMFile(pool, path)
		if err != nil {
			return fmt.Errorf("%s: %v", e.Name(), err)
		}
		n += k
	}
	if n == 0 {
		return fmt.Errorf("no PEM certificate in it")
	}
	return nil
}

// unwrapPath drops the path an *os.PathError repeats (the flag's message
// names the file already).
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// opensslCiphers maps OpenSSL's names of the TLS 1.2 cipher suites Go
// implements to Go's IDs. IANA names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)
// are read too.
var opensslCiphers = map[string]uint16{
	"ECDHE-ECDSA-AES128-GCM-SHA256": tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-RSA-AES128-GCM-SHA256":   tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-ECDSA-AES256-GCM-SHA384": tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-RSA-AES256-GCM-SHA384":   tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-ECDSA-CHACHA20-POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-RSA-CHACHA20-POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-ECDSA-AES128-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	"ECDHE-RSA-AES128-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	"ECDHE-ECDSA-AES256-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	"ECDHE-RSA-AES256-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
	"ECDHE-ECDSA-AES128-SHA256":     tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
	"ECDHE-RSA-AES128-SHA256":       tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
	"AES128-GCM-SHA256":             tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
	"AES256-GCM-SHA384":             tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
	"AES128-SHA":                    tls.TLS_RSA_WITH_AES_128_CBC_SHA,
	"AES256-SHA":                    tls.TLS_RSA_WITH_AES_256_CBC_SHA,
	"AES128-SHA256":                 tls.TLS_RSA_WITH_AES_128_CBC_SHA256,
	"ECDHE-RSA-DES-CBC3-SHA":        tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA,
	"DES-CBC3-SHA":                  tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA,
	"ECDHE-ECDSA-RC4-SHA":           tls.TLS_ECDHE_ECDSA_WITH_RC4_128_SHA,
	"ECDHE-RSA-RC4-SHA":             tls.TLS_ECDHE_RSA_WITH_RC4_128_SHA,
	"RC4-SHA":                       tls.TLS_RSA_WITH_RC4_128_SHA,
}

// suites13 are the TLS 1.3 suites Go implements, by their (OpenSSL's and
// IANA's) names.
var suites13 = map[string]uint16{
	"TLS_AES_128_GCM_SHA256":       tls.TLS_AES_128_GCM_SHA256,
	"TLS_AES_256_GCM_SHA384":       tls.TLS_AES_256_GCM_SHA384,
	"TLS_CHACHA20_POLY1305_SHA256": tls.TLS_CHACHA20_POLY1305_SHA256,
}

// ianaCiphers maps Go's names of its TLS 1.2 (and older) suites to IDs.
func ianaCiphers() map[string]uint16 {
	m := map[string]uint16{}
	for _, list := range [][]*tls.CipherSuite{tls.CipherSuites(), tls.InsecureCipherSuites()} {
		for _, s := range list {
			if _, is13 := suites13[s.Name]; !is13 {
				m[s.Name] = s.ID
			}
		}
	}
	return m
}

// cipherList splits an OpenSSL list: names separated by ':' (or ',',
// spaces).
func cipherList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == ',' || r == ' ' })
}

// parseCiphers reads --tls-ciphers: TLS 1.2 suites by OpenSSL or IANA
// name, in order of preference. OpenSSL's keywords and operators (HIGH,
// !aNULL, +RSA) are not read.
func parseCiphers(s string) ([]uint16, error) {
	iana := ianaCiphers()
	var ids []uint16
	for _, name := range cipherList(s) {
		id, ok := opensslCiphers[name]
		if !ok {
			id, ok = iana[name]
		}
		switch {
		case ok:
			ids = append(ids, id)
		case suites13[name] != 0:
			return nil, fmt.Errorf("%s is a TLS 1.3 suite: give it with --tls-ciphersuites", name)
		default:
			return nil, fmt.Errorf("unknown or unsupported cipher %q (Go's crypto/tls implements: %s)", name, strings.Join(knownCiphers(), ":"))
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no cipher named")
	}
	return ids, nil
}

// knownCiphers lists the OpenSSL names parseCiphers reads, sorted.
func knownCiphers() []string {
	out := make([]string, 0, len(opensslCiphers))
	for n := range opensslCiphers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// parseSuites13 reads --tls-ciphersuites: the TLS 1.3 suites a connection
// may negotiate.
func parseSuites13(s string) (map[uint16]bool, error) {
	allowed := map[uint16]bool{}
	for _, name := range cipherList(s) {
		id, ok := suites13[name]
		if !ok {
			return nil, fmt.Errorf("unknown or unsupported TLS 1.3 suite %q (Go's crypto/tls implements: TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256)", name)
		}
		allowed[id] = true
	}
	if len(allowed) == 0 {
		return nil, fmt.Errorf("no suite named")
	}
	return allowed, nil
}

// embeddedTLS returns the embedded target's TLS configuration, nil when it
// serves plain TCP: the certificate of --tls-cert/--tls-key, or with --tls
// alone one made at start for 127.0.0.1 and localhost. A client config
// (non-nil) is made to trust that certificate.
func embeddedTLS(c *cli.Context, client *tls.Config) (*tls.Config, error) {
	if client == nil {
		return nil, nil
	}
	var pair tls.Certificate
	switch {
	case c.IsSet("tls-cert") != c.IsSet("tls-key"):
		return nil, usageErrorf("--tls-cert and --tls-key go together: give both")
	case c.IsSet("tls-cert"):
		var err error
		if pair, err = loadServerPair(c); err != nil {
			return nil, err
		}
	default:
		p, err := certs.SelfSigned("127.0.0.1", "localhost")
		if err != nil {
			return nil, failed(fmt.Errorf("make the embedded target's certificate: %w", err))
		}
		if pair, err = p.TLS(); err != nil {
			return nil, failed(err)
		}
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, usageErrorf("--tls-cert %s: %v", c.String("tls-cert"), err)
	}
	if client.RootCAs == nil {
		client.RootCAs = x509.NewCertPool()
	}
	client.RootCAs.AddCert(leaf)
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// loadServerPair reads --tls-cert and --tls-key.
func loadServerPair(c *cli.Context) (tls.Certificate, error) {
	certFile, keyFile := c.String("tls-cert"), c.String("tls-key")
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return pair, usageErrorf("--tls-cert %s --tls-key %s: %v", certFile, keyFile, err)
	}
	return pair, nil
}

// handshakes gathers the TLS handshakes of a command's connections, for
// each test in turn (take).
type handshakes struct {
	mu       sync.Mutex
	h        *hdrhistogram.Histogram
	versions []string
	suites   []string
}

// watchTLS makes every TLS connection dialed with o record its handshake,
// and returns where; nil (which records nothing) over plain TCP.
func watchTLS(o *conn.Options) *handshakes {
	if o.TLS == nil {
		return nil
	}
	hs := &handshakes{}
	o.OnTLSHandshake = hs.record
	return hs
}

func (hs *handshakes) record(i conn.TLSInfo) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.h == nil {
		hs.h = histo.New()
	}
	_ = hs.h.RecordValue(max(int64(i.Handshake), histo.Lowest)) // beyond an hour: not a handshake
	if v := tls.VersionName(i.Version); !contains(hs.versions, v) {
		hs.versions = append(hs.versions, v)
	}
	if s := tls.CipherSuiteName(i.CipherSuite); !contains(hs.suites, s) {
		hs.suites = append(hs.suites, s)
	}
}

// take returns the handshakes recorded since the last take (nil over
// plain TCP), and starts over.
func (hs *handshakes) take() *scheduler.TLSHandshakes {
	if hs == nil {
		return nil
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	t := &scheduler.TLSHandshakes{Version: strings.Join(hs.versions, ", "), CipherSuite: strings.Join(hs.suites, ", "), Time: hs.h}
	if t.Time == nil {
		t.Time = histo.New()
	}
	hs.h, hs.versions, hs.suites = nil, nil, nil
	return t
}
