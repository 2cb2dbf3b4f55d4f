// Package certs makes throwaway X.509 certificates: a CA, server and client
// certificates it signs, and self-signed ones. For tests, for the measuring
// programs under bench/, and for the embedded target's --tls, which serves
// a certificate made at start. Keys are ECDSA P-256; nothing here is meant
// to protect anything beyond one process's life.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Validity is how long the certificates made here are valid, from an hour
// before they were made (clocks differ a little).
const Validity = 7 * 24 * time.Hour

// CA is a certificate authority that signs the certificates it issues.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// PEM is the CA certificate, PEM-encoded.
	PEM []byte
}

// Pair is a certificate with its private key, PEM-encoded, and the
// parsed certificate.
type Pair struct {
	CertPEM, KeyPEM []byte
	Cert            *x509.Certificate
}

// TLS returns the pair as a tls.Certificate.
func (p Pair) TLS() (tls.Certificate, error) { return tls.X509KeyPair(p.CertPEM, p.KeyPEM) }

// NewCA makes a self-signed certificate authority named name.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl, err := template(name)
	if err != nil {
		return nil, err
	}
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, key: key, PEM: pemBlock("CERTIFICATE", der)}, nil
}

// Server issues a server certificate for hosts (IP addresses or DNS
// names).
func (ca *CA) Server(hosts ...string) (Pair, error) {
	return ca.issue(hosts, x509.ExtKeyUsageServerAuth)
}

// Client issues a client certificate named name, for mutual TLS.
func (ca *CA) Client(name string) (Pair, error) {
	p, err := ca.issueNamed(name, nil, x509.ExtKeyUsageClientAuth)
	return p, err
}

func (ca *CA) issue(hosts []string, usage x509.ExtKeyUsage) (Pair, error) {
	if len(hosts) == 0 {
		return Pair{}, errors.New("certs: a server certificate needs a host")
	}
	return ca.issueNamed(hosts[0], hosts, usage)
}

func (ca *CA) issueNamed(name string, hosts []string, usage x509.ExtKeyUsage) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, err
	}
	tmpl, err := template(name)
	if err != nil {
		return Pair{}, err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
	addHosts(tmpl, hosts)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return Pair{}, err
	}
	return pair(der, key)
}

// SelfSigned makes a self-signed server certificate for hosts: one that a
// client trusts by having the certificate itself as its root.
func SelfSigned(hosts ...string) (Pair, error) {
	if len(hosts) == 0 {
		return Pair{}, errors.New("certs: a server certificate needs a host")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, err
	}
	tmpl, err := template(hosts[0])
	if err != nil {
		return Pair{}, err
	}
	tmpl.IsCA = true // a root of its own chain
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	addHosts(tmpl, hosts)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return Pair{}, err
	}
	return pair(der, key)
}

// Loopback makes what a test of a TLS server on 127.0.0.1 needs: the
// server's config, with a certificate for 127.0.0.1 signed by a CA made
// for the purpose, and a client config that trusts that CA and verifies
// the name 127.0.0.1.
func Loopback() (server, client *tls.Config, err error) {
	ca, err := NewCA("pacer loopback CA")
	if err != nil {
		return nil, nil, err
	}
	p, err := ca.Server("127.0.0.1")
	if err != nil {
		return nil, nil, err
	}
	cert, err := p.TLS()
	if err != nil {
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return &tls.Config{Certificates: []tls.Certificate{cert}}, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}, nil
}

func template(name string) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name, Organization: []string{"pacer test"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(Validity),
	}, nil
}

func addHosts(tmpl *x509.Certificate, hosts []string) {
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
}

func pair(der []byte, key *ecdsa.PrivateKey) (Pair, error) {
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Pair{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return Pair{}, err
	}
	return Pair{CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("PRIVATE KEY", kder), Cert: cert}, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// Files are the paths of a CA, a server pair and a client pair written to
// a directory by Write.
type Files struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

// Write makes a CA, a server certificate for hosts and a client
// certificate, and writes them as PEM files into dir (keys readable by the
// owner only).
func Write(dir string, hosts ...string) (Files, error) {
	ca, err := NewCA("pacer test CA")
	if err != nil {
		return Files{}, err
	}
	srv, err := ca.Server(hosts...)
	if err != nil {
		return Files{}, err
	}
	cl, err := ca.Client("pacer test client")
	if err != nil {
		return Files{}, err
	}
	f := Files{
		CA:         filepath.Join(dir, "ca.crt"),
		ServerCert: filepath.Join(dir, "server.crt"),
		ServerKey:  filepath.Join(dir, "server.key"),
		ClientCert: filepath.Join(dir, "client.crt"),
		ClientKey:  filepath.Join(dir, "client.key"),
	}
	for _, w := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{f.CA, ca.PEM, 0o644}, {f.ServerCert, srv.CertPEM, 0o644}, {f.ServerKey, srv.KeyPEM, 0o600},
		{f.ClientCert, cl.CertPEM, 0o644}, {f.ClientKey, cl.KeyPEM, 0o600},
	} {
		if err := os.WriteFile(w.path, w.data, w.mode); err != nil {
			return Files{}, fmt.Errorf("certs: %w", err)
		}
	}
	return f, nil
}
