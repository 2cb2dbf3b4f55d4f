// Package kit holds what the measurement programs under bench/ share: a
// throwaway redis-server on a free loopback port, a pacer run's result
// document, medians, and a process's memory (/proc/PID/status) and CPU
// time.
package kit

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/pacer-load/pacer/internal/certs"
)

// Server is a running redis-server.
type Server struct {
	Addr, Port string
	// TLSPort is the port of its TLS listener (StartTLS), and CA the PEM
	// file of the CA its certificate chains to.
	TLSPort, CA string
	cmd         *exec.Cmd
	dir         string
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// Start launches redis-server with persistence off and waits until it
// accepts connections. extra are more redis-server arguments, such as
// "--maxclients", "100".
func Start(extra ...string) (*Server, error) { return start(false, extra...) }

// StartTLS is Start with a TLS port besides the plain one (same server,
// same data), its certificates made for 127.0.0.1 by package certs; it
// asks clients for no certificate.
func StartTLS() (*Server, error) { return start(true) }

func start(withTLS bool, extra ...string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pacer-bench-redis")
	if err != nil {
		return nil, err
	}
	args := []string{"--port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "log")}
	var tlsPort, ca string
	if withTLS {
		f, err := certs.Write(dir, "127.0.0.1")
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if tlsPort, err = freePort(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		ca = f.CA
		args = append(args, "--tls-port", tlsPort, "--tls-cert-file", f.ServerCert, "--tls-key-file", f.ServerKey,
			"--tls-ca-cert-file", f.CA, "--tls-auth-clients", "no")
	}
	cmd := exec.Command("redis-server", append(args, extra...)...)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", port), Port: port, TLSPort: tlsPort, CA: ca, cmd: cmd, dir: dir}
	for range 200 {
		if c, err := net.Dial("tcp", s.Addr); err == nil {
			c.Close()
			return s, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Stop()
	return nil, fmt.Errorf("redis-server on port %s did not come up", port)
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Dir is the server's working directory (its AOF, its log): a probe of
// the disk the server writes to writes there.
func (s *Server) Dir() string { return s.dir }

// Signal sends sig to the server (SIGSTOP, SIGCONT).
func (s *Server) Signal(sig syscall.Signal) error { return s.cmd.Process.Signal(sig) }

// Stop kills the server and removes its directory.
func (s *Server) Stop() {
	s.cmd.Process.Signal(syscall.SIGCONT)
	s.cmd.Process.Kill()
	s.cmd.Wait()
	os.RemoveAll(s.dir)
}
