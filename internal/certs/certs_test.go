package certs

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
)

func TestChainsVerify(t *testing.T) {
	dir := t.TempDir()
	f, err := Write(dir, "127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(f.CA)
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA file holds no certificate")
	}
	srv, err := tls.LoadX509KeyPair(f.ServerCert, f.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(srv.Certificate[0])
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
			t.Errorf("server certificate for %s: %v", host, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "other.example"}); err == nil {
		t.Error("server certificate verified for a host it is not for")
	}
	cl, err := tls.LoadX509KeyPair(f.ClientCert, f.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	cleaf, _ := x509.ParseCertificate(cl.Certificate[0])
	if _, err := cleaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if fi, _ := os.Stat(f.ServerKey); fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v", fi.Mode())
	}
	self, err := SelfSigned("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	own := x509.NewCertPool()
	own.AddCert(self.Cert)
	if _, err := self.Cert.Verify(x509.VerifyOptions{Roots: own, DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("self-signed: %v", err)
	}
}

// TestLoopback: a TLS client with Loopback's client config completes a
// handshake with a server that has its server config.
func TestLoopback(t *testing.T) {
	server, client, err := Loopback()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", server)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), client)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}
