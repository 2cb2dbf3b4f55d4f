package conn

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/certs"
	"github.com/pacer-load/pacer/internal/redistest"
)

// tlsPair is a server certificate for 127.0.0.1 and a client config that
// trusts it.
func tlsPair(t *testing.T) (server *tls.Config, client *tls.Config) {
	t.Helper()
	server, client, err := certs.Loopback()
	if err != nil {
		t.Fatal(err)
	}
	return server, client
}

// tlsLoopback serves one TLS connection with handle.
func tlsLoopback(t *testing.T, cfg *tls.Config, handle func(c net.Conn)) string {
	t.Helper()
	return loopback(t, func(c net.Conn) {
		tc := tls.Server(c, cfg)
		if tc.Handshake() != nil {
			return
		}
		handle(tc)
	})
}

// pongs answers every PING line of a RESP stream with +PONG.
func pongs(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if strings.EqualFold(strings.TrimSpace(line), "PING") {
			if _, err := c.Write([]byte("+PONG\r\n")); err != nil {
				return
			}
		}
	}
}

func TestTLSPipelinedCommandsAndHandshakeTime(t *testing.T) {
	srv, cli := tlsPair(t)
	addr := tlsLoopback(t, srv, pongs)
	var mu sync.Mutex
	var seen []TLSInfo
	c, err := Dial(context.Background(), Options{Addr: addr, TLS: cli, OnTLSHandshake: func(i TLSInfo) {
		mu.Lock()
		seen = append(seen, i)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	info, ok := c.TLS()
	if !ok || info.Handshake <= 0 || info.Version != tls.VersionTLS13 || info.CipherSuite == 0 {
		t.Fatalf("TLS() = %+v, %v", info, ok)
	}
	if len(seen) != 1 || seen[0] != info {
		t.Fatalf("OnTLSHandshake saw %+v, want one call with %+v", seen, info)
	}
	h := newCollect()
	c.Start(h)
	// More than a TLS chunk in one flush, then many small flushes.
	const n = 5000
	for i := range n {
		c.Queue(AppendCommand(nil, "PING"), int64(i+1), 0)
		if i%1000 == 999 {
			for c.Pending() {
				if err := c.Flush(int64(i + 1)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := c.FlushBlocking(n); err != nil {
		t.Fatal(err)
	}
	h.wait(t, n)
	c.Close()
	for i, e := range h.entries {
		if e.Intended != int64(i+1) || e.Written == 0 || e.Written < e.Intended-999 {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	if c.BytesWritten() != uint64(n*len(AppendCommand(nil, "PING"))) {
		t.Fatalf("BytesWritten %d counts more than the commands' plaintext", c.BytesWritten())
	}
}

// TestTLSFlushNeverBlocks: a server that stops reading fills the socket;
// Flush still returns at once, and commands whose ciphertext did not get
// out are neither stamped nor visible to the reader.
func TestTLSFlushNeverBlocks(t *testing.T) {
	srv, cli := tlsPair(t)
	release := make(chan struct{})
	addr := tlsLoopback(t, srv, func(c net.Conn) { <-release })
	c, err := Dial(context.Background(), Options{Addr: addr, TLS: cli, SkipProbe: true, MaxInflight: 1 << 20, MaxBuffer: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer close(release)
	defer c.Close()
	cmd := AppendCommand(nil, "SET", "k", strings.Repeat("v", 1000))
	done := make(chan struct{})
	go func() {
		defer close(done)
		// 16 MB: far more than the socket buffers hold.
		for i := range 16000 {
			c.Queue(cmd, int64(i+1), 0)
			if err := c.Flush(int64(i + 1)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Flush blocked on a full socket")
	}
	if !c.Pending() {
		t.Fatal("16 MB to a server that does not read, and nothing pending")
	}
	if w := c.Written(); w == 0 || w >= 16000 {
		t.Fatalf("Written = %d: want some but not all commands written", w)
	}
}

func TestTLSHandshakeFailures(t *testing.T) {
	srv, _ := tlsPair(t)
	ctx := context.Background()
	// A CA the server's certificate does not chain to.
	_, other := tlsPair(t)
	addr := tlsLoopback(t, srv, pongs)
	_, err := Dial(ctx, Options{Addr: addr, TLS: other, DialTimeout: 5 * time.Second})
	if !errors.Is(err, ErrTLS) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("unknown CA: %v", err)
	}
	// A server that does not speak TLS.
	plain := loopback(t, func(c net.Conn) { c.Write([]byte("-ERR unknown command\r\n")) })
	_, err = Dial(ctx, Options{Addr: plain, TLS: other, DialTimeout: 5 * time.Second})
	if !errors.Is(err, ErrTLS) || !strings.Contains(err.Error(), "does not speak TLS") {
		t.Fatalf("plain server: %v", err)
	}
}

func TestTLSAgainstRedis(t *testing.T) {
	for _, mutual := range []bool{false, true} {
		srv := redistest.StartTLS(t, redistest.TLSOptions{AuthClients: mutual}, "--requirepass", "s3cret")
		cfg := srv.TLS.Client.Clone()
		o := Options{Addr: srv.Addr, TLS: cfg, Password: "s3cret", DB: 2, RESP3: true}
		c, err := Dial(context.Background(), o)
		if err != nil {
			t.Fatalf("mutual %v: %v", mutual, err)
		}
		h := newCollect()
		c.Start(h)
		for range 100 {
			c.Queue(AppendCommand(nil, "INCR", "tls-counter"), 1, 0)
		}
		for c.Pending() {
			if err := c.Flush(1); err != nil {
				t.Fatal(err)
			}
		}
		h.wait(t, 100)
		c.Close()
		if h.errs != 0 {
			t.Fatalf("mutual %v: %d errors", mutual, h.errs)
		}
		v, err := Do(context.Background(), o, "GET", "tls-counter")
		if err != nil || string(v.Str) != "100" {
			t.Fatalf("mutual %v: GET %q %v", mutual, v.Str, err)
		}
		if !mutual {
			continue
		}
		// Without a client certificate, a server that requires one refuses.
		cfg = cfg.Clone()
		cfg.Certificates = nil
		o.TLS = cfg
		if _, err := Dial(context.Background(), o); err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("no client certificate: %v", err)
		}
	}
}

// TestForAddrServerName: a node's options keep the seed's auth and TLS
// settings but check the certificate against the node's own host, unless
// the server name was given (--sni); the seed's configuration is left
// alone.
func TestForAddrServerName(t *testing.T) {
	seedTLS := &tls.Config{ServerName: "seed.example", MinVersion: tls.VersionTLS12}
	for _, tc := range []struct {
		name  string
		o     Options
		addr  string
		want  string // the node's ServerName; "" for no TLS
		clone bool   // a copy of the seed's configuration
	}{
		{"plain TCP", Options{Network: "unix", Addr: "/tmp/seed.sock"}, "10.0.0.2:7000", "", false},
		{"a DNS name", Options{Addr: "seed.example:7000", TLS: seedTLS}, "node-2.example:7001", "node-2.example", true},
		{"an IP address", Options{Addr: "seed.example:7000", TLS: seedTLS}, "127.0.0.1:7001", "127.0.0.1", true},
		{"an IPv6 address", Options{Addr: "seed.example:7000", TLS: seedTLS}, "[::1]:7001", "::1", true},
		{"the seed's own host", Options{Addr: "seed.example:7000", TLS: seedTLS}, "seed.example:7001", "seed.example", false},
		{"--sni", Options{Addr: "seed.example:7000", TLS: seedTLS, FixedServerName: true}, "127.0.0.1:7001", "seed.example", false},
		{"no host", Options{Addr: "seed.example:7000", TLS: seedTLS}, ":7001", "seed.example", false},
	} {
		n := tc.o.ForAddr(tc.addr)
		if n.Network != "tcp" || n.Addr != tc.addr {
			t.Errorf("%s: dials %s %s", tc.name, n.Network, n.Addr)
		}
		switch {
		case tc.want == "":
			if n.TLS != nil {
				t.Errorf("%s: TLS where the seed has none", tc.name)
			}
		case n.TLS.ServerName != tc.want:
			t.Errorf("%s: ServerName %q, want %q", tc.name, n.TLS.ServerName, tc.want)
		case (n.TLS != seedTLS) != tc.clone:
			t.Errorf("%s: copied the configuration: %v, want %v", tc.name, n.TLS != seedTLS, tc.clone)
		case n.TLS.MinVersion != seedTLS.MinVersion:
			t.Errorf("%s: the copy lost the seed's settings", tc.name)
		}
	}
	if seedTLS.ServerName != "seed.example" {
		t.Errorf("the seed's configuration changed: ServerName %q", seedTLS.ServerName)
	}
}

// TestForAddrVerifiesTheNodesOwnName: a node whose certificate names only
// its IP address is reached by options made for a seed named otherwise;
// with the name fixed (--sni), the same certificate is refused.
func TestForAddrVerifiesTheNodesOwnName(t *testing.T) {
	srv, cli := tlsPair(t) // a certificate for 127.0.0.1 alone
	cli.ServerName = "localhost"
	seed := Options{Addr: "localhost:6379", TLS: cli, SkipProbe: true, DialTimeout: 5 * time.Second}
	addr := tlsLoopback(t, srv, pongs)
	c, err := Dial(context.Background(), seed.ForAddr(addr))
	if err != nil {
		t.Fatalf("the node's own name: %v", err)
	}
	c.Close()
	fixed := seed
	fixed.FixedServerName = true
	addr = tlsLoopback(t, srv, pongs)
	if _, err := Dial(context.Background(), fixed.ForAddr(addr)); !errors.Is(err, ErrTLS) || !strings.Contains(err.Error(), "localhost") {
		t.Fatalf("--sni localhost against a certificate for 127.0.0.1: %v", err)
	}
}
