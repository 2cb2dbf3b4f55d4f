package conn

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/certs"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
)

// TestOpenSSLCipherNames: every OpenSSL name maps to a suite Go knows by
// the IANA name that OpenSSL's documentation pairs with it.
func TestOpenSSLCipherNames(t *testing.T) {
	names := map[uint16]string{}
	for _, list := range [][]*tls.CipherSuite{tls.CipherSuites(), tls.InsecureCipherSuites()} {
		for _, s := range list {
			names[s.ID] = s.Name
		}
	}
	for ossl, id := range opensslCiphers {
		iana := names[id]
		if iana == "" {
			t.Errorf("%s: Go has no suite %#x", ossl, id)
			continue
		}
		// The parts OpenSSL names appear in the IANA name.
		for _, part := range strings.Split(ossl, "-") {
			p := map[string]string{"AES128": "AES_128", "AES256": "AES_256", "DES": "3DES", "CBC3": "3DES", "RC4": "RC4_128", "SHA": "SHA"}[part]
			if p == "" {
				p = part
			}
			if !strings.Contains(iana, p) {
				t.Errorf("%s -> %s: %q missing", ossl, iana, p)
			}
		}
		if got, err := parseCiphers(ossl); err != nil || len(got) != 1 || got[0] != id {
			t.Errorf("parseCiphers(%s) = %v, %v", ossl, got, err)
		}
		if got, err := parseCiphers(iana); err != nil || len(got) != 1 || got[0] != id {
			t.Errorf("parseCiphers(%s) = %v, %v", iana, got, err)
		}
	}
}

// TestTLSFilesClient: what the files and names give, and the user's
// mistakes as usage errors in the words the CLI prints.
func TestTLSFilesClient(t *testing.T) {
	dir := t.TempDir()
	files, err := certs.Write(dir, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	caDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(caDir, "a.pem"), mustRead(t, files.CA), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(caDir, "b.txt"), []byte("no certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyDir := t.TempDir()
	none := filepath.Join(dir, "none.pem")

	cfg, err := TLSFiles{CACert: files.CA, Cert: files.ClientCert, Key: files.ClientKey,
		Ciphers: "ECDHE-RSA-AES128-GCM-SHA256:TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", Suites13: "TLS_AES_128_GCM_SHA256"}.Client(t.Context(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ServerName != "127.0.0.1" || cfg.RootCAs == nil || len(cfg.Certificates) != 1 || cfg.MinVersion != tls.VersionTLS12 ||
		len(cfg.CipherSuites) != 2 || cfg.CipherSuites[0] != tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 || cfg.VerifyConnection == nil {
		t.Errorf("client config %+v", cfg)
	}
	if err := cfg.VerifyConnection(tls.ConnectionState{Version: tls.VersionTLS13, CipherSuite: tls.TLS_AES_256_GCM_SHA384}); err == nil ||
		!strings.Contains(usagetest.CLI(err), "the server chose TLS_AES_256_GCM_SHA384, which --tls-ciphersuites leaves out") {
		t.Errorf("a suite left out: %v", err)
	}
	if err := cfg.VerifyConnection(tls.ConnectionState{Version: tls.VersionTLS13, CipherSuite: tls.TLS_AES_128_GCM_SHA256}); err != nil {
		t.Errorf("an allowed suite: %v", err)
	}
	if cfg, err := (TLSFiles{CACertDir: caDir, SNI: "redis.example"}).Client(t.Context(), ""); err != nil || cfg.ServerName != "redis.example" || cfg.RootCAs == nil {
		t.Errorf("--cacertdir --sni over a unix socket: %+v, %v", cfg, err)
	}
	if cfg, err := (TLSFiles{Insecure: true}).Client(t.Context(), ""); err != nil || !cfg.InsecureSkipVerify || cfg.RootCAs != nil {
		t.Errorf("--insecure: %+v, %v", cfg, err)
	}

	for _, tc := range []struct {
		f    TLSFiles
		host string
		want string
	}{
		{TLSFiles{}, "", "TLS over a unix socket needs --sni NAME (the name its certificate is for) or --insecure"},
		{TLSFiles{CACert: none}, "h", "--cacert " + none + ": no such file or directory"},
		{TLSFiles{CACert: notPEM}, "h", "--cacert " + notPEM + ": no PEM certificate in it"},
		{TLSFiles{CACertDir: emptyDir}, "h", "--cacertdir " + emptyDir + ": no PEM certificate in it"},
		{TLSFiles{Cert: files.ClientCert}, "h", "--cert and --key go together: give both"},
		{TLSFiles{Key: files.ClientKey}, "h", "--cert and --key go together: give both"},
		{TLSFiles{Cert: files.ClientCert, Key: notPEM}, "h", "--cert " + files.ClientCert + " --key " + notPEM + ": "},
		{TLSFiles{Ciphers: "ECDHE-RSA-AES128-GCM-SHA256:FANCY-CIPHER"}, "h", `--tls-ciphers: unknown or unsupported cipher "FANCY-CIPHER" (Go's crypto/tls implements: AES128-GCM-SHA256:`},
		{TLSFiles{Ciphers: "TLS_AES_128_GCM_SHA256"}, "h", "--tls-ciphers: TLS_AES_128_GCM_SHA256 is a TLS 1.3 suite: give it with --tls-ciphersuites"},
		{TLSFiles{Ciphers: ":"}, "h", "--tls-ciphers: no cipher named"},
		{TLSFiles{Suites13: "TLS_AES_128_CCM_SHA256"}, "h", `--tls-ciphersuites: unknown or unsupported TLS 1.3 suite "TLS_AES_128_CCM_SHA256"`},
		{TLSFiles{Suites13: ","}, "h", "--tls-ciphersuites: no suite named"},
	} {
		_, err := tc.f.Client(t.Context(), tc.host)
		if err == nil || !usage.Is(err) || !strings.HasPrefix(usagetest.CLI(err), tc.want) {
			t.Errorf("%+v: %v (usage %v), want %q", tc.f, err, usage.Is(err), tc.want)
		}
	}
}

// TestTLSServerFiles: a server's certificate from files, or made at start
// and trusted by its client.
func TestTLSServerFiles(t *testing.T) {
	dir := t.TempDir()
	files, err := certs.Write(dir, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := (TLSServerFiles{}).Config(); cfg != nil || err != nil {
		t.Errorf("no files: %v, %v", cfg, err)
	}
	if cfg, err := (TLSServerFiles{Cert: files.ServerCert, Key: files.ServerKey}).Config(); err != nil || len(cfg.Certificates) != 1 || cfg.MinVersion != tls.VersionTLS12 {
		t.Errorf("files: %+v, %v", cfg, err)
	}
	for _, f := range []TLSServerFiles{{Cert: files.ServerCert}, {Key: files.ServerKey}} {
		if _, err := f.Config(); err == nil || !usage.Is(err) || usagetest.CLI(err) != "--tls-cert and --tls-key go together: give both" {
			t.Errorf("%+v: Config: %v", f, err)
		}
		if _, err := f.Trusted(&tls.Config{}); err == nil || !usage.Is(err) || usagetest.CLI(err) != "--tls-cert and --tls-key go together: give both" {
			t.Errorf("%+v: Trusted: %v", f, err)
		}
	}
	bad := TLSServerFiles{Cert: files.ServerCert, Key: files.ClientKey}
	if _, err := bad.Config(); err == nil || !usage.Is(err) || !strings.HasPrefix(usagetest.CLI(err), "--tls-cert "+files.ServerCert+" --tls-key "+files.ClientKey+": ") {
		t.Errorf("mismatched key: %v", err)
	}
	if cfg, err := (TLSServerFiles{}).Trusted(nil); cfg != nil || err != nil {
		t.Errorf("plain TCP: %v, %v", cfg, err)
	}
	// Made at start or given, the client trusts it: a handshake verifies.
	for _, f := range []TLSServerFiles{{}, {Cert: files.ServerCert, Key: files.ServerKey}} {
		client := &tls.Config{ServerName: "127.0.0.1"}
		srv, err := f.Trusted(client)
		if err != nil || client.RootCAs == nil {
			t.Fatalf("%+v: %v, roots %v", f, err, client.RootCAs)
		}
		addr := tlsLoopback(t, srv, pongs)
		c, err := Dial(t.Context(), Options{Addr: addr, TLS: client})
		if err != nil {
			t.Fatalf("%+v: dial: %v", f, err)
		}
		c.Close()
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
