package conn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pacer-load/pacer/internal/certs"
	"github.com/pacer-load/pacer/internal/input"
	"github.com/pacer-load/pacer/internal/usage"
)

// MaxTLSFileSize is the most a TLS file (--cacert, --cert, --key, a file of
// --cacertdir, --tls-cert, --tls-key) may hold: a CA bundle of every
// public root is about 200 KiB. Files are read up to it plus one byte, so
// /dev/zero or a huge file is an error, not an endless read.
const MaxTLSFileSize = 4 << 20

// TLSFiles is a client's TLS settings as the user gives them: files to
// read and names to look up, redis-benchmark's TLS flags. Client reads
// them into a *tls.Config. An empty string is a setting not given.
//
// The errors name the flags (--cacert, --tls-ciphers, ...): every file is
// read, every name looked up, when the configuration is made, so a
// mistake is a usage error (internal/usage) before anything runs.
type TLSFiles struct {
	// CACert is a PEM file of the CA certificates to trust, CACertDir a
	// directory of them (OpenSSL's hashed links included); either
	// replaces the system's roots.
	CACert, CACertDir string
	// Cert and Key are the client certificate and its private key (PEM),
	// for servers that require one: both or neither.
	Cert, Key string
	// SNI is the server name to send and to verify the certificate
	// against, instead of the host.
	SNI string
	// Insecure skips verifying the server's certificate.
	Insecure bool
	// Ciphers lists the TLS 1.2 cipher suites, by OpenSSL or IANA name,
	// in order of preference (Go's default when empty); Suites13 the TLS
	// 1.3 suites the server may choose (any when empty). Names are
	// separated by ':' (or ',', spaces).
	Ciphers, Suites13 string
}

// Client returns the configuration of a TLS client of host (empty for a
// unix socket, which then needs SNI or Insecure). Each file is read up to
// MaxTLSFileSize; a cancelled ctx ends a read that waits (a FIFO).
func (f TLSFiles) Client(ctx context.Context, host string) (*tls.Config, error) {
	cfg := &tls.Config{
		ServerName:         host,
		InsecureSkipVerify: f.Insecure,
		MinVersion:         tls.VersionTLS12,
	}
	if f.SNI != "" {
		cfg.ServerName = f.SNI
	}
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		return nil, usage.Flagf("", "TLS over a unix socket needs {sni} NAME (the name its certificate is for) or {insecure}")
	}
	if f.CACert != "" || f.CACertDir != "" {
		pool := x509.NewCertPool()
		if f.CACert != "" {
			n, err := addPEMFile(ctx, pool, f.CACert)
			if err != nil {
				return nil, usage.Flagf("cacert", "{cacert} %s: %v", f.CACert, err)
			}
			if n == 0 {
				return nil, usage.Flagf("cacert", "{cacert} %s: no PEM certificate in it", f.CACert)
			}
		}
		if f.CACertDir != "" {
			if err := addPEMDir(ctx, pool, f.CACertDir); err != nil {
				return nil, usage.Flagf("cacertdir", "{cacertdir} %s: %v", f.CACertDir, err)
			}
		}
		cfg.RootCAs = pool
	}
	switch {
	case (f.Cert != "") != (f.Key != ""):
		return nil, usage.Flagf("cert", "{cert} and {key} go together: give both")
	case f.Cert != "":
		pair, err := loadKeyPair(ctx, "cert", f.Cert, "key", f.Key)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if f.Ciphers != "" {
		ids, err := parseCiphers(f.Ciphers)
		if err != nil {
			return nil, usage.Flagf("tls-ciphers", "{tls-ciphers}: %v", err)
		}
		cfg.CipherSuites = ids
	}
	if f.Suites13 != "" {
		allowed, err := parseSuites13(f.Suites13)
		if err != nil {
			return nil, usage.Flagf("tls-ciphersuites", "{tls-ciphersuites}: %v", err)
		}
		// Go offers every TLS 1.3 suite and lets no one choose: the
		// connection is refused after the handshake instead.
		cfg.VerifyConnection = func(st tls.ConnectionState) error {
			if st.Version == tls.VersionTLS13 && !allowed[st.CipherSuite] {
				return usage.Option("", "the server chose %s, which {tls-ciphersuites} leaves out (Go offers every TLS 1.3 suite: restrict them on the server)", tls.CipherSuiteName(st.CipherSuite))
			}
			return nil
		}
	}
	return cfg, nil
}

// TLSServerFiles is a TLS server's certificate and its private key, PEM
// files (pacer serve's and the embedded target's --tls-cert, --tls-key):
// both or neither.
type TLSServerFiles struct {
	Cert, Key string
	// Ctx, when set, interrupts reading the files (a FIFO that no one
	// writes): the command's context, cancelled by the first Ctrl-C.
	Ctx context.Context
}

// Config returns the server's configuration, nil when no certificate is
// given.
func (f TLSServerFiles) Config() (*tls.Config, error) {
	switch {
	case (f.Cert != "") != (f.Key != ""):
		return nil, usage.Flagf("tls-cert", "{tls-cert} and {tls-key} go together: give both")
	case f.Cert == "":
		return nil, nil
	}
	pair, err := f.load()
	if err != nil {
		return nil, err
	}
	return serverConfig(pair), nil
}

// Trusted returns the configuration of a server that client (nil: plain
// TCP, and then nil) connects to, such as the embedded target: the
// certificate of f, or when none is given one made now for 127.0.0.1 and
// localhost. client is made to trust that certificate, so verification
// stays on.
func (f TLSServerFiles) Trusted(client *tls.Config) (*tls.Config, error) {
	if client == nil {
		return nil, nil
	}
	var pair tls.Certificate
	switch {
	case (f.Cert != "") != (f.Key != ""):
		return nil, usage.Flagf("tls-cert", "{tls-cert} and {tls-key} go together: give both")
	case f.Cert != "":
		var err error
		if pair, err = f.load(); err != nil {
			return nil, err
		}
	default:
		p, err := certs.SelfSigned("127.0.0.1", "localhost")
		if err != nil {
			return nil, fmt.Errorf("make the embedded target's certificate: %w", err)
		}
		if pair, err = p.TLS(); err != nil {
			return nil, err
		}
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, usage.Flagf("tls-cert", "{tls-cert} %s: %v", f.Cert, err)
	}
	if client.RootCAs == nil {
		client.RootCAs = x509.NewCertPool()
	}
	client.RootCAs.AddCert(leaf)
	return serverConfig(pair), nil
}

// load reads the certificate and key files.
func (f TLSServerFiles) load() (tls.Certificate, error) {
	ctx := f.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	return loadKeyPair(ctx, "tls-cert", f.Cert, "tls-key", f.Key)
}

// loadKeyPair is tls.LoadX509KeyPair with each file read up to
// MaxTLSFileSize; its errors are usage errors that name the flags.
func loadKeyPair(ctx context.Context, certFlag, cert, keyFlag, key string) (tls.Certificate, error) {
	certPEM, err := readTLSFile(ctx, cert)
	if err != nil {
		return tls.Certificate{}, usage.Flagf(certFlag, "%v %s: %v", usage.Name(certFlag), cert, err)
	}
	keyPEM, err := readTLSFile(ctx, key)
	if err != nil {
		return tls.Certificate{}, usage.Flagf(keyFlag, "%v %s: %v", usage.Name(keyFlag), key, err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return pair, usage.Flagf(certFlag, "%v %s %v %s: %v", usage.Name(certFlag), cert, usage.Name(keyFlag), key, err)
	}
	return pair, nil
}

// readTLSFile reads a TLS file of at most MaxTLSFileSize bytes.
func readTLSFile(ctx context.Context, path string) ([]byte, error) {
	b, err := input.ReadFile(ctx, path, MaxTLSFileSize)
	return b, unwrapPath(err)
}

func serverConfig(pair tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
}

// addPEMFile adds the certificates of a PEM file to pool and returns how
// many it held.
func addPEMFile(ctx context.Context, pool *x509.CertPool, path string) (int, error) {
	b, err := readTLSFile(ctx, path)
	if err != nil {
		return 0, err
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
func addPEMDir(ctx context.Context, pool *x509.CertPool, dir string) error {
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
		k, err := addPEMFile(ctx, pool, path)
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

// parseCiphers reads a list of TLS 1.2 suites by OpenSSL or IANA name, in
// order of preference. OpenSSL's keywords and operators (HIGH, !aNULL,
// +RSA) are not read.
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
			return nil, usage.Option("", "%s is a TLS 1.3 suite: give it with {tls-ciphersuites}", name)
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
	return slices.Sorted(maps.Keys(opensslCiphers))
}

// parseSuites13 reads a list of the TLS 1.3 suites a connection may
// negotiate.
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
