package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/certs"
	"github.com/pacer-load/pacer/internal/redistest"
)

// tlsDoc is what these tests read of a result document.
type tlsDoc struct {
	Config struct {
		TLS      map[string]any `json:"tls"`
		User     *string        `json:"user"`
		Password *string        `json:"password"`
	} `json:"config"`
	Tests []struct {
		Connections int `json:"connections"`
		Counts      struct {
			Completed uint64 `json:"completed"`
		} `json:"counts"`
		TLS *struct {
			Version     string `json:"version"`
			CipherSuite string `json:"cipher_suite"`
			Handshakes  int64  `json:"handshakes"`
			HandshakeMs *struct {
				P50 float64 `json:"p50"`
			} `json:"handshake_ms"`
			Histogram string `json:"histogram"`
		} `json:"tls"`
	} `json:"tests"`
}

func readTLSDoc(t *testing.T, path string) tlsDoc { return readJSON[tlsDoc](t, path) }

// oneLine fails t unless stderr is exactly one line holding every want.
func wantOneLine(t *testing.T, what, stderr string, want ...string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 {
		t.Errorf("%s: want one line on stderr, got %q", what, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: stderr %q lacks %q", what, stderr, w)
		}
	}
}

// TestEveryCommandOverTLS: run, bench, compare and fill against a real
// redis-server's TLS port, with --tls --cacert and with rediss://: each
// completes, and its JSON holds one handshake per connection, out of the
// latencies.
func TestEveryCommandOverTLS(t *testing.T) {
	t.Parallel()
	srv := redistest.StartTLS(t, redistest.TLSOptions{})
	dir := t.TempDir()
	hp := hostPort(t, srv.Addr)
	tlsArgs := append([]string{"--tls", "--cacert", srv.TLS.CA}, hp...)
	for i, tc := range []struct {
		args  []string
		conns int
	}{
		{append([]string{"run", "--rate", "1k", "--duration", "1s", "-c", "3", "-t", "get", "--lag-limit", "1s"}, tlsArgs...), 3},
		{[]string{"run", "--rate", "1k", "-n", "200", "-c", "2", "-t", "set", "--lag-limit", "1s", "-u", "rediss://" + srv.Addr + "/1", "--cacert", srv.TLS.CA}, 2},
		{append([]string{"bench", "-n", "2000", "-c", "4", "-P", "16", "-t", "get"}, tlsArgs...), 4},
		{append([]string{"compare", "--rate", "1k", "--duration", "300ms", "-c", "2", "-q"}, tlsArgs...), 2},
		{append([]string{"fill", "-r", "500", "-c", "2"}, tlsArgs...), 2},
	} {
		out := filepath.Join(dir, "r.json")
		os.Remove(out)
		code, stdout, stderr := pacer(t, append(tc.args, "--json", out)...)
		if code != exitOK && code != exitUntrusted {
			t.Fatalf("case %d %v: exit %d\n%s\n%s", i, tc.args, code, stdout, stderr)
		}
		d := readTLSDoc(t, out)
		if d.Config.TLS == nil || d.Config.TLS["server_name"] != "127.0.0.1" || d.Config.TLS["ca"] != "given" {
			t.Errorf("case %d: config tls %v", i, d.Config.TLS)
		}
		for _, test := range d.Tests {
			h := test.TLS
			if h == nil || h.Version != "TLS 1.3" || h.CipherSuite == "" || h.HandshakeMs == nil || h.HandshakeMs.P50 <= 0 || h.Histogram == "" {
				t.Fatalf("case %d: tls %+v", i, h)
			}
			if h.Handshakes != int64(tc.conns) || test.Counts.Completed == 0 {
				t.Errorf("case %d: %d handshakes for %d connections, %d completed", i, h.Handshakes, tc.conns, test.Counts.Completed)
			}
		}
		switch tc.args[0] {
		case "run":
			if !strings.Contains(stdout, "  tls            TLS 1.3 ") || !strings.Contains(stdout, "(in no latency above)") {
				t.Errorf("case %d: no tls line in\n%s", i, stdout)
			}
			// The server's side is asked over TLS too.
			if !strings.Contains(stdout, "server: redis 7") || !strings.Contains(stdout, "server side") {
				t.Errorf("case %d: no server identity or server side in\n%s", i, stdout)
			}
		case "bench":
			if !strings.Contains(stderr, "tls: TLS 1.3 ") {
				t.Errorf("case %d: no tls line on stderr %q", i, stderr)
			}
		case "compare":
			if !strings.Contains(stdout, "tls handshake p50 (ms)") {
				t.Errorf("case %d: no tls rows in\n%s", i, stdout)
			}
		}
		// pacer report prints the document's tls line as run did.
		if tc.args[0] == "run" {
			_, rep, _ := pacer(t, "report", out)
			if !strings.Contains(rep, "  tls            TLS 1.3 ") {
				t.Errorf("report: no tls line in\n%s", rep)
			}
		}
	}
}

// TestMutualTLS: a server that requires client certificates refuses a
// client without one (exit 1, one line) and serves one with --cert/--key.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	srv := redistest.StartTLS(t, redistest.TLSOptions{AuthClients: true})
	base := append([]string{"run", "--rate", "1k", "-n", "100", "-c", "2", "-t", "get", "--lag-limit", "1s", "-q", "--tls", "--cacert", srv.TLS.CA}, hostPort(t, srv.Addr)...)
	code, _, stderr := pacer(t, base...)
	if code != exitFailed {
		t.Fatalf("no client certificate: exit %d %q", code, stderr)
	}
	wantOneLine(t, "no client certificate", stderr, "certificate")
	code, stdout, stderr := pacer(t, append(base, "--cert", srv.TLS.ClientCert, "--key", srv.TLS.ClientKey)...)
	if code != exitOK && code != exitUntrusted {
		t.Fatalf("--cert --key: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestTLSFailures: bad files are usage errors before anything runs;
// handshakes that fail are a failed run with one line saying why.
func TestTLSFailures(t *testing.T) {
	t.Parallel()
	srv := redistest.StartTLS(t, redistest.TLSOptions{})
	plain := redistest.Start(t)
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o644)
	emptyDir := t.TempDir()
	hp := hostPort(t, srv.Addr)
	run := func(extra ...string) (int, string) {
		args := append([]string{"run", "--rate", "1k", "-n", "20", "-c", "1", "-t", "get", "-q", "--lag-limit", "1s"}, hp...)
		code, _, stderr := pacer(t, append(args, extra...)...)
		return code, stderr
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls", "--cacert", filepath.Join(dir, "none.pem")}, "--cacert " + filepath.Join(dir, "none.pem") + ": no such file"},
		{[]string{"--tls", "--cacert", notPEM}, "no PEM certificate"},
		{[]string{"--tls", "--cacertdir", emptyDir}, "--cacertdir " + emptyDir + ": no PEM certificate"},
		{[]string{"--tls", "--cert", srv.TLS.ClientCert}, "--cert and --key go together"},
		{[]string{"--tls", "--cert", srv.TLS.ClientCert, "--key", notPEM}, "--cert " + srv.TLS.ClientCert + " --key " + notPEM},
		{[]string{"--tls", "--tls-ciphers", "ECDHE-RSA-AES128-GCM-SHA256:FANCY-CIPHER"}, `"FANCY-CIPHER"`},
		{[]string{"--tls", "--tls-ciphers", "TLS_AES_128_GCM_SHA256"}, "TLS 1.3 suite: give it with --tls-ciphersuites"},
		{[]string{"--tls", "--tls-ciphersuites", "TLS_AES_128_CCM_SHA256"}, `"TLS_AES_128_CCM_SHA256"`},
		{[]string{"--insecure"}, "--insecure needs --tls"},
		{[]string{"--tls-cert", srv.TLS.ServerCert}, "--tls-cert needs --embedded"},
	} {
		code, stderr := run(tc.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want 2 (%q)", tc.args, code, stderr)
		}
		wantOneLine(t, strings.Join(tc.args, " "), stderr, tc.want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		// The system's roots do not know the test's CA.
		{[]string{"--tls"}, "TLS handshake failed: tls: failed to verify certificate"},
		{[]string{"--tls", "--cacert", srv.TLS.CA, "--sni", "redis.example"}, "wanted to match redis.example"},
		{[]string{"--tls", "--cacert", srv.TLS.CA, "--tls-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"}, "which --tls-ciphersuites leaves out"},
	} {
		code, stderr := run(tc.args...)
		if code != exitFailed {
			t.Errorf("%v: exit %d, want 1 (%q)", tc.args, code, stderr)
		}
		wantOneLine(t, strings.Join(tc.args, " "), stderr, tc.want)
	}
	// TLS to a plain port, and plain to a TLS port.
	args := append([]string{"bench", "-n", "10", "-c", "1", "-q", "-t", "get", "--tls", "--insecure"}, hostPort(t, plain.Addr)...)
	code, _, stderr := pacer(t, args...)
	if code != exitFailed || !strings.Contains(stderr, "Could not connect to Redis at "+plain.Addr+": TLS handshake failed: no reply within 5s (is it a TLS port?)") {
		t.Errorf("TLS to a plain port: exit %d %q", code, stderr)
	}
	code, stderr = run()
	if code != exitFailed {
		t.Errorf("plain to a TLS port: exit %d %q", code, stderr)
	}
	wantOneLine(t, "plain to a TLS port", stderr, "--tls")
	// --insecure: no CA needed.
	if code, stderr := run("--tls", "--insecure"); code != exitOK && code != exitUntrusted {
		t.Errorf("--insecure: exit %d %q", code, stderr)
	}
}

// TestTLSCipherChoice: --tls-ciphers picks the TLS 1.2 suite (OpenSSL's
// names) of a server limited to TLS 1.2, --tls-ciphersuites one of TLS 1.3
// the server prefers, and the JSON says which was negotiated.
func TestTLSCipherChoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		server []string
		client []string
		want   string
	}{
		{[]string{"--tls-protocols", "TLSv1.2"}, []string{"--tls-ciphers", "ECDHE-ECDSA-AES256-GCM-SHA384"}, "TLS 1.2 TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
		{[]string{"--tls-protocols", "TLSv1.2"}, []string{"--tls-ciphers", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"}, "TLS 1.2 TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"},
		{[]string{"--tls-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"}, []string{"--tls-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384"}, "TLS 1.3 TLS_CHACHA20_POLY1305_SHA256"},
	} {
		srv := redistest.StartTLS(t, redistest.TLSOptions{}, tc.server...)
		out := filepath.Join(t.TempDir(), "r.json")
		args := append([]string{"run", "--rate", "1k", "-n", "50", "-c", "2", "-t", "get", "-q", "--lag-limit", "1s", "--tls", "--cacert", srv.TLS.CA, "--json", out}, hostPort(t, srv.Addr)...)
		code, _, stderr := pacer(t, append(args, tc.client...)...)
		if code != exitOK && code != exitUntrusted {
			t.Fatalf("%v: exit %d %q", tc.client, code, stderr)
		}
		h := readTLSDoc(t, out).Tests[0].TLS
		if got := h.Version + " " + h.CipherSuite; got != tc.want {
			t.Errorf("%v: negotiated %s, want %s", tc.client, got, tc.want)
		}
	}
}

// TestEmbeddedTLS: --embedded --tls serves TLS with a certificate made at
// start that the client trusts (verification stays on), and
// --tls-cert/--tls-key serve a given one.
func TestEmbeddedTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files, err := certs.Write(dir, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{
		{"--tls"},
		{"--tls-cert", files.ServerCert, "--tls-key", files.ServerKey},
		{"--tls", "--tls-cert", files.ServerCert, "--tls-key", files.ServerKey, "--cacert", files.CA},
	} {
		for _, cmd := range [][]string{
			{"run", "--embedded", "--rate", "1k", "-n", "100", "-c", "2", "-t", "get", "--lag-limit", "1s"},
			{"bench", "--embedded", "-n", "1000", "-c", "2", "-t", "get"},
		} {
			out := filepath.Join(dir, "r.json")
			os.Remove(out)
			args := append(append(cmd, extra...), "--json", out)
			code, stdout, stderr := pacer(t, args...)
			if code != exitOK && code != exitUntrusted {
				t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
			}
			if !strings.Contains(stderr, "; TLS)") {
				t.Errorf("%v: the banner does not say TLS: %q", args, stderr)
			}
			if h := readTLSDoc(t, out).Tests[0].TLS; h == nil || h.Handshakes != 2 {
				t.Errorf("%v: tls %+v", args, h)
			}
		}
	}
	code, _, stderr := pacer(t, "run", "--embedded", "--rate", "1k", "-n", "10", "--tls-cert", files.ServerCert)
	if code != exitUsage || !strings.Contains(stderr, "--tls-cert and --tls-key go together") {
		t.Errorf("--tls-cert alone: exit %d %q", code, stderr)
	}
}
