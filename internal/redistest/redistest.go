// Package redistest starts real redis-server processes on free loopback
// ports for tests, and stops them when the test ends: single servers
// (Start, StartTLS), a primary with replicas (StartReplicated) watched by
// redis-sentinel processes (StartSentinels), and Redis Clusters with or
// without replicas (StartCluster, StartClusterWithReplicas); with what
// moves a topology during a run: a forced Sentinel failover, a CLUSTER
// FAILOVER, a slot migration or reshard, and a node paused for a while
// (PauseFor).
//
// A plain `go test ./...` runs the tests that need redis-server whenever
// it is installed: found on PATH, in the usual install directories (which
// a test's PATH may lack), or named by PACER_REDIS_SERVER. When it is not
// installed, those tests are skipped and the skip is said once on stderr,
// so it does not go unnoticed; PACER_REQUIRE_REDIS=1 (set by .ci/run)
// makes them fail instead, so a missing install step cannot hide behind a
// green run.
package redistest

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/certs"
)

// Server is a running redis-server.
type Server struct {
	Addr  string
	Port  int
	cmd   *exec.Cmd
	dir   string
	bin   string
	extra []string
	// password (with user, when set) is sent with AUTH by Do when the
	// server requires one.
	user, password string
	// TLS is set for a server started by StartTLS: it listens on a TLS
	// port only.
	TLS *TLSFiles
}

// TLSOptions configure StartTLS.
type TLSOptions struct {
	// AuthClients makes the server require a client certificate signed by
	// the CA (--tls-auth-clients yes); by default it asks for none.
	AuthClients bool
}

// TLSFiles are the PEM files of a TLS server's CA, its certificate and a
// client certificate the CA signed (for mutual TLS), and a client
// configuration that trusts the CA and presents that certificate.
type TLSFiles struct {
	certs.Files
	AuthClients bool
	Client      *tls.Config
}

// installDirs are where packages and installers put Redis binaries, looked
// at when PATH does not have them.
var installDirs = []string{"/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/opt/homebrew/bin", "/snap/bin", "/bin", "/sbin"}

// warnings is where the one-time notice of a missing binary goes.
var warnings io.Writer = os.Stderr

var (
	warnMu sync.Mutex
	warned = map[string]bool{}
)

// envName is the variable that names a binary's path: PACER_REDIS_SERVER
// for redis-server.
func envName(name string) string {
	return "PACER_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// find returns the path of the named binary, or "" when it is nowhere.
func find(name string) string {
	if p := os.Getenv(envName(name)); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range installDirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Binary returns the path of name (redis-server, redis-benchmark, …),
// skipping t when it is not installed (and saying so once on stderr), or
// failing t when PACER_REQUIRE_REDIS=1.
func Binary(t testing.TB, name string) string {
	t.Helper()
	p := find(name)
	if p != "" {
		return p
	}
	if os.Getenv("PACER_REQUIRE_REDIS") == "1" {
		t.Fatalf("%s not found but PACER_REQUIRE_REDIS=1", name)
	}
	warnMu.Lock()
	if !warned[name] {
		warned[name] = true
		fmt.Fprintf(warnings, "redistest: %s not found (PATH, %s, $%s): tests that need it are SKIPPED; install it (apt-get install redis-server redis-tools) to run them\n",
			name, strings.Join(installDirs, ", "), envName(name))
	}
	warnMu.Unlock()
	t.Skipf("%s not installed", name)
	return ""
}

// Start launches a redis-server on a free loopback port with persistence
// off, waits until it answers PING, and stops it at the end of the test.
// extra are further "--name value" arguments.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	return startWith(t, nil, extra)
}

// StartTLS launches a redis-server that speaks TLS only (--port 0
// --tls-port on a free loopback port), with a CA and certificates for
// 127.0.0.1 made for the test (see Server.TLS), and stops it at the end of
// the test. A redis-server built without TLS skips the test, saying so on
// stderr (it fails it when PACER_REQUIRE_REDIS=1).
func StartTLS(t testing.TB, o TLSOptions, extra ...string) *Server {
	t.Helper()
	Binary(t, "redis-server")
	files, err := certs.Write(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	f := &TLSFiles{Files: files, AuthClients: o.AuthClients}
	if f.Client, err = clientConfig(files); err != nil {
		t.Fatal(err)
	}
	return startWith(t, f, extra)
}

func clientConfig(f certs.Files) (*tls.Config, error) {
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cert, err := tls.LoadX509KeyPair(f.ClientCert, f.ClientKey)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", Certificates: []tls.Certificate{cert}}, nil
}

func startWith(t testing.TB, tf *TLSFiles, extra []string) *Server {
	t.Helper()
	return startOnFreePort(t, Binary(t, "redis-server"), tf, "redis-server", func() []string { return extra })
}

// startOnFreePort starts bin on a free port with the arguments extra
// returns, trying five ports: another process may take one between
// freePort and the server's bind.
func startOnFreePort(t testing.TB, bin string, tf *TLSFiles, what string, extra func() []string) *Server {
	t.Helper()
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s, err := start(bin, port, t.TempDir(), extra(), tf)
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		if tf != nil && strings.Contains(err.Error(), "tls-") {
			skipNoTLS(t, bin, err)
		}
		lastErr = err
	}
	t.Fatalf("start %s: %v", what, lastErr)
	return nil
}

// skipNoTLS skips t, as redis-server refused its TLS options (fails it
// with PACER_REQUIRE_REDIS=1).
func skipNoTLS(t testing.TB, bin string, err error) {
	t.Helper()
	if os.Getenv("PACER_REQUIRE_REDIS") == "1" {
		t.Fatalf("redis-server has no TLS but PACER_REQUIRE_REDIS=1: %v", err)
	}
	fmt.Fprintf(warnings, "redistest: %s was built without TLS: TLS tests are SKIPPED (%v)\n", bin, err)
	t.Skip("redis-server without TLS")
}

// freePort returns a loopback port nothing listens on, drawn below the
// kernel's ephemeral range: every listen on port 0 (an embedded target, a
// metrics endpoint, in any test binary) and every client's own end of a
// connection take their ports from that range, so the port a killed
// server leaves until Restart is never handed to another test meanwhile
// (one was: a test's embedded target took it, and both tests failed).
func freePort() (int, error) {
	lo, hi := serverPorts()
	for range 100 {
		port := lo + rand.IntN(hi-lo)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // taken: draw again
		}
		l.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free loopback port in %d-%d", lo, hi-1)
}

// serverPorts is the range freePort draws from: 20000 up to the start of
// the ephemeral range (ip_local_port_range; Linux's default 32768), away
// from the well-known ports below.
func serverPorts() (lo, hi int) {
	lo, hi = 20000, 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > lo+1000 {
				hi = n
			}
		}
	}
	return lo, hi
}

func start(bin string, port int, dir string, extra []string, tf *TLSFiles) (*Server, error) {
	listen := []string{"--port", strconv.Itoa(port)}
	if tf != nil {
		auth := "no"
		if tf.AuthClients {
			auth = "yes"
		}
		listen = []string{"--port", "0", "--tls-port", strconv.Itoa(port),
			"--tls-cert-file", tf.ServerCert, "--tls-key-file", tf.ServerKey,
			"--tls-ca-cert-file", tf.CA, "--tls-auth-clients", auth}
	}
	args := append(listen, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "redis.log"),
		// .ci/run stops servers a crashed test leaves behind by these files.
		"--pidfile", filepath.Join(dir, "redis.pid"),
	)
	args = append(args, extra...)
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A configuration it refuses (an option this build lacks) is said on
	// stderr, before the log file opens.
	errPath := filepath.Join(dir, "stderr.log")
	if f, err := os.Create(errPath); err == nil {
		cmd.Stderr = f
		defer f.Close()
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Port: port, cmd: cmd, dir: dir, bin: bin, extra: extra, TLS: tf}
	for i := 0; i+1 < len(extra); i++ {
		if extra[i] == "--requirepass" {
			s.password = extra[i+1]
		}
	}
	if err := s.awaitStart(errPath, "redis.log"); err != nil {
		return nil, err
	}
	return s, nil
}

// awaitStart waits up to 5 s for the server just started to answer as
// itself; if it does not, it stops it and returns an error with the last
// lines it said (on stderr, errPath, or in its log, named log in its
// directory).
func (s *Server) awaitStart(errPath, logName string) error {
	cmd, dir, port := s.cmd, s.dir, s.Port
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		// The server that answers must be this one: whoever else
		// listens on the port when it cannot bind is not it.
		if info, err := s.Info("server"); err == nil && info["process_id"] == strconv.Itoa(cmd.Process.Pid) {
			return nil
		}
		if !s.running() {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Stop()
	log, _ := os.ReadFile(filepath.Join(dir, logName))
	said, _ := os.ReadFile(errPath)
	return fmt.Errorf("%s on port %d did not answer: %s", filepath.Base(s.bin), port, lastLines(string(said)+"\n"+string(log), 5))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// running reports whether the server process has not exited: a server
// that refused its configuration is not waited for.
func (s *Server) running() bool {
	return s.cmd.Process.Signal(syscall.Signal(0)) == nil && !exited(s.cmd)
}

// exited reports whether cmd's process is a zombie (it exited, nobody
// waited for it yet).
func exited(cmd *exec.Cmd) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	if err != nil {
		return false // no /proc: assume it runs
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	return ok && strings.HasPrefix(rest, "Z")
}

// Kill stops the server at once (SIGKILL), as a crash would.
func (s *Server) Kill() { s.Stop() }

// Restart starts a new server on the same port after Kill, and waits until
// it answers.
func (s *Server) Restart() error {
	n, err := start(s.bin, s.Port, s.dir, s.extra, s.TLS)
	if err != nil {
		return err
	}
	s.cmd = n.cmd
	return nil
}

// Pause stops the server process (SIGSTOP): it neither reads nor answers,
// while the kernel keeps accepting bytes into its socket buffers.
func (s *Server) Pause() error { return s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

// Stop kills the server and waits for it. Idempotent.
func (s *Server) Stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// Do sends one command and returns the first line of the reply (for bulk
// replies, the bulk's content). It is a test helper, not a client.
func (s *Server) Do(args ...string) (string, error) {
	c, err := s.dial()
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	if s.password != "" {
		if _, err := roundTrip(c, r, s.auth()...); err != nil {
			return "", err
		}
	}
	return roundTrip(c, r, args...)
}

// auth is the AUTH command of the server's password (and user).
func (s *Server) auth() []string {
	if s.user != "" {
		return []string{"AUTH", s.user, s.password}
	}
	return []string{"AUTH", s.password}
}

// dial connects to the server, over TLS for a TLS server.
func (s *Server) dial() (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var d net.Dialer
	if s.TLS != nil {
		td := tls.Dialer{NetDialer: &d, Config: s.TLS.Client}
		return td.DialContext(ctx, "tcp", s.Addr)
	}
	return d.DialContext(ctx, "tcp", s.Addr)
}

func roundTrip(c net.Conn, r *bufio.Reader, args ...string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "-"):
		return "", fmt.Errorf("%s", line[1:])
	case strings.HasPrefix(line, "$"):
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return strings.TrimLeft(line, "+:"), nil
}

// Info returns the fields of INFO section as a map.
func (s *Server) Info(section string) (map[string]string, error) {
	text, err := s.Do("INFO", section)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, l := range strings.Split(text, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// PortString returns the port as a string, for command lines.
func (s *Server) PortString() string { return strconv.Itoa(s.Port) }
