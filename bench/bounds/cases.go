package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pacer-load/pacer/internal/hostile"
)

// allCases are the memory and hang reproductions, in the order of the
// hardening round's findings:
// 2(a) --commands, 2(b) the send side, 2(c) --max-inflight, 2(d) error
// codes, 2(e) bench, 2(f) serve, 3(a)-(c) hangs, 4 refused connections, and
// the first round's server stopped mid-run. Flags are the defaults but for
// what a reproduction names (and -q, a rate and a duration where pacer
// requires them). A case's limit is what it should take at most (its
// duration, the 5 s default drain, the 2 s of a Ctrl-C) with a margin for
// a loaded machine; past it the process is killed and the case is a hang.
func allCases() []benchCase {
	return []benchCase{
		{name: "commands-100", about: "--commands with 100 templates (175 MB before)", limit: time.Minute,
			setup: commandsFile(100, 0)},
		{name: "commands-300", about: "--commands with 300 templates (482 MB before)", limit: time.Minute,
			setup: commandsFile(300, 0)},
		{name: "commands-1MB", about: "--commands with a 1 MB file: 1000 templates of 1000 bytes (17 GB before)", limit: time.Minute,
			setup: commandsFile(1000, 1000)},
		{name: "commands-4MB", about: "--commands with a 4 MB file (OOM-killed before): refused", limit: time.Minute, want: []int{2},
			setup: commandsFile(4000, 1000)},
		{name: "commands-devzero", about: "--commands /dev/zero (read without end before): refused", limit: 30 * time.Second, want: []int{2},
			setup: func(e *env) (*job, error) {
				r, err := e.sharedRedis()
				if err != nil {
					return nil, err
				}
				return &job{args: []string{"run", "-p", r.Port, "--rate", "10k", "--duration", "3s", "-q", "--commands", "/dev/zero"}}, nil
			}},
		{name: "neverread-d100000", about: "run -d 100000 against a server that never reads (270 MB/s before)", limit: 30 * time.Second,
			setup: againstHostile(afterPing(hostile.NeverRead), "run", "--rate", "10k", "--duration", "5s", "-t", "set", "-d", "100000", "-q")},
		{name: "neverread-d50000000", about: "run -d 50000000 against a server that never reads (3 GB before)", limit: time.Minute,
			setup: againstHostile(afterPing(hostile.NeverRead), "run", "--rate", "100", "--duration", "5s", "-t", "set", "-d", "50000000", "-q")},
		{name: "max-inflight-16M", about: "--max-inflight 16777216 -c 1, a server that never answers (512 MB per connection up front before)", limit: time.Minute,
			setup: againstHostile(afterPing(hostile.Silent), "run", "--rate", "100k", "--duration", "3s", "-c", "1", "-t", "get", "--max-inflight", "16777216", "-q")},
		{name: "max-inflight-16M-c50", about: "--max-inflight 16777216 with the default 50 connections: refused", limit: time.Minute, want: []int{2},
			setup: againstHostile(afterPing(hostile.Silent), "run", "--rate", "100k", "--duration", "3s", "-t", "get", "--max-inflight", "16777216", "-q")},
		{name: "errors-600k-codes", about: "600k distinct error codes, --json (157 MB RSS and an 18 MB JSON before)", limit: time.Minute,
			setup: distinctErrors},
		{name: "bench-config-huge", about: "bench against a server whose CONFIG GET reply never ends", limit: time.Minute,
			setup: configHuge},
		{name: "bench-x-devzero", about: "bench -x < /dev/zero (2.5 GB before): refused", limit: time.Minute, want: []int{2},
			setup: func(e *env) (*job, error) {
				r, err := e.sharedRedis()
				if err != nil {
					return nil, err
				}
				return &job{args: []string{"bench", "-p", r.Port, "-n", "1000", "-q", "-x", "SET", "k"}, stdin: "/dev/zero"}, nil
			}},
		{name: "bench-d-1e9", about: "bench -d 1000000000: refused", limit: time.Minute, want: []int{2},
			setup: onRedis("bench", "-d", "1000000000", "-t", "set", "-n", "1000", "-q")},
		{name: "bench-l-json-20s", about: "bench -l --json for 20 s (every loop's test kept before), then Ctrl-C", limit: time.Minute, want: []int{130},
			setup: benchLoop},
		{name: "serve-30x60MB-sets", about: "pacer serve, 30 clients each sending an unfinished 60 MB SET (2.9 GB before); serve's RSS", limit: time.Minute,
			setup: serveUnfinished},
		{name: "keydist-gaussian-99.6", about: "--key-dist gaussian:99.6,0.001 -r 100 (looped forever before): exit 2 at once", limit: 15 * time.Second, want: []int{2},
			setup: onRedis("run", "--rate", "1k", "--duration", "1s", "-r", "100", "--key-dist", "gaussian:99.6,0.001", "-q")},
		{name: "keydist-gaussian-1e300", about: "--key-dist gaussian:50,1e300", limit: 15 * time.Second, want: []int{2},
			setup: onRedis("run", "--rate", "1k", "--duration", "1s", "-r", "100", "--key-dist", "gaussian:50,1e300", "-q")},
		{name: "keydist-gaussian-inf", about: "--key-dist gaussian:50%,inf", limit: 15 * time.Second, want: []int{2},
			setup: onRedis("run", "--rate", "1k", "--duration", "1s", "-r", "100", "--key-dist", "gaussian:50%,inf", "-q")},
		{name: "compare-silent-2s", about: "compare --duration 2s against a server that never replies (killed at 25 s before)", limit: 30 * time.Second,
			setup: againstHostile(afterPing(hostile.Silent), "compare", "--duration", "2s", "-q")},
		{name: "rate-1000M-uniform", about: "run --rate 1000M --duration 1s (8 s before)", limit: 20 * time.Second,
			setup: onRedis("run", "--rate", "1000M", "--duration", "1s", "-t", "ping", "-q")},
		{name: "rate-1000M-poisson", about: "run --rate 1000M --duration 1s --arrival poisson (20 s before)", limit: 20 * time.Second,
			setup: onRedis("run", "--rate", "1000M", "--duration", "1s", "--arrival", "poisson", "-t", "ping", "-q")},
		{name: "rate-1000M-ctrl-c", about: "run --rate 1000M --duration 3s --arrival poisson, Ctrl-C at 1 s (exit at 25.7 s before): ends within 2 s of it", limit: 6 * time.Second, want: []int{130},
			setup: func(e *env) (*job, error) {
				j, err := onRedis("run", "--rate", "1000M", "--duration", "3s", "--arrival", "poisson", "-t", "ping", "-q")(e)
				if j != nil {
					j.interrupt = time.Second
				}
				return j, err
			}},
		{name: "maxclients-100-c2000", about: "run -c 2000 against redis-server --maxclients 100 (28,485 silent reconnects in 5 s before)", limit: time.Minute,
			setup: maxClients},
		{name: "accept-close", about: "run against a server that accepts and closes every connection (exit 4, 0 completed before)", limit: 30 * time.Second, want: []int{1},
			setup: againstHostile(hostile.AcceptClose, "run", "--rate", "10k", "--duration", "3s", "-t", "get", "-q")},
		{name: "sigstop-20s-200k", about: "run --rate 200k, redis-server SIGSTOPped 20 s of the 26 s (round one)", limit: 90 * time.Second,
			setup: sigstop},
	}
}

// onRedis runs pacer with args against the shared redis-server.
func onRedis(args ...string) func(e *env) (*job, error) {
	return func(e *env) (*job, error) {
		r, err := e.sharedRedis()
		if err != nil {
			return nil, err
		}
		return &job{args: withTarget(args, "127.0.0.1", r.Port)}, nil
	}
}

// againstHostile runs pacer with args against a hostile server of one case.
func againstHostile(b hostile.Behaviour, args ...string) func(e *env) (*job, error) {
	return func(e *env) (*job, error) {
		j := &job{}
		s, err := e.hostile(j, b)
		if err != nil {
			return j, err
		}
		j.args = withTarget(args, s.Host(), s.Port())
		return j, nil
	}
}

// withTarget inserts -h and -p after the command name.
func withTarget(args []string, host, port string) []string {
	out := append([]string{args[0], "-h", host, "-p", port}, args[1:]...)
	return out
}

// commandsFile writes n templates (each padded to size bytes, if above 0)
// and runs them from --commands against redis-server.
func commandsFile(n, size int) func(e *env) (*job, error) {
	return func(e *env) (*job, error) {
		r, err := e.sharedRedis()
		if err != nil {
			return nil, err
		}
		path, err := e.file(fmt.Sprintf("commands-%d-%d.txt", n, size), func(w io.Writer) {
			for i := range n {
				var line string
				switch i % 4 {
				case 0:
					line = fmt.Sprintf("SET k%d:__rand_int__ __data__", i)
				case 1:
					line = fmt.Sprintf("GET k%d:__rand_int__", i)
				case 2:
					line = fmt.Sprintf("HSET h%d:__rand_int__ f __data__", i)
				default:
					line = fmt.Sprintf("INCR c%d:__rand_int__", i)
				}
				if size > 0 {
					// A literal argument fills the line to size bytes.
					line = fmt.Sprintf("SET p%d:__rand_int__ ", i)
					line += strings.Repeat("v", max(size-len(line)-1, 1))
				}
				fmt.Fprintf(w, "%d %s\n", i%5+1, line)
			}
		})
		if err != nil {
			return nil, err
		}
		st, _ := os.Stat(path)
		return &job{
			args: []string{"run", "-p", r.Port, "--rate", "10k", "--duration", "3s", "-r", "100000", "-q", "--commands", path},
			note: func() string { return fmt.Sprintf("file %.2f MB", float64(st.Size())/1e6) },
		}, nil
	}
}

// distinctErrors: every reply an error of a new code, about 600k of them
// at 120k/s for 5 s, written to --json.
func distinctErrors(e *env) (*job, error) {
	j := &job{}
	var n atomic.Uint64
	s, err := e.hostile(j, fastServe(func(args [][]byte, out []byte) []byte {
		if len(args) == 1 && strings.EqualFold(string(args[0]), "PING") {
			return append(out, "+PONG\r\n"...) // the connection check
		}
		out = append(out, "-E"...)
		out = strconv.AppendUint(out, n.Add(1), 10)
		return append(out, " distinct error\r\n"...)
	}))
	if err != nil {
		return j, err
	}
	out := filepath.Join(e.dir, "errors.json")
	os.Remove(out)
	j.args = []string{"run", "-h", s.Host(), "-p", s.Port(), "--rate", "120k", "--duration", "5s", "-t", "get", "-q", "--json", out}
	j.note = func() string {
		st, err := os.Stat(out)
		if err != nil {
			return fmt.Sprintf("%d codes sent, no JSON", n.Load())
		}
		return fmt.Sprintf("%d codes sent, JSON %.0f KB", n.Load(), float64(st.Size())/1e3)
	}
	return j, nil
}

// configHuge: CONFIG GET is answered with a bulk string that claims 1 GB
// and streams zeros until the client goes; everything else +OK / +PONG.
func configHuge(e *env) (*job, error) {
	j := &job{}
	var streamed atomic.Int64
	s, err := e.hostile(j, func(c *hostile.Client) {
		zeros := make([]byte, 64<<10)
		for {
			args, err := c.ReadCommand()
			if err != nil {
				return
			}
			switch {
			case len(args) > 0 && strings.EqualFold(args[0], "CONFIG"):
				if c.Write("*2\r\n$4\r\nsave\r\n$1073741824\r\n") != nil {
					return
				}
				for {
					select {
					case <-c.Closing():
						return
					default:
					}
					c.SetWriteDeadline(time.Now().Add(2 * time.Second))
					k, err := c.Conn.Write(zeros)
					streamed.Add(int64(k))
					if err != nil {
						return
					}
				}
			case len(args) > 0 && strings.EqualFold(args[0], "PING"):
				if c.Write("+PONG\r\n") != nil {
					return
				}
			default:
				if c.Write("+OK\r\n") != nil {
					return
				}
			}
		}
	})
	if err != nil {
		return j, err
	}
	j.args = []string{"bench", "-h", s.Host(), "-p", s.Port(), "-t", "ping", "-n", "10000", "-q"}
	j.note = func() string { return fmt.Sprintf("%.0f MB of CONFIG reply streamed", float64(streamed.Load())/1e6) }
	return j, nil
}

// benchLoop: bench -l --json against redis-server for 20 s, then Ctrl-C.
func benchLoop(e *env) (*job, error) {
	r, err := e.sharedRedis()
	if err != nil {
		return nil, err
	}
	out := filepath.Join(e.dir, "loop.json")
	os.Remove(out)
	return &job{
		args:      []string{"bench", "-p", r.Port, "-l", "-t", "ping,set,get", "-n", "5000", "-q", "--json", out},
		interrupt: 20 * time.Second,
		note: func() string {
			st, err := os.Stat(out)
			if err != nil {
				return "no JSON"
			}
			return fmt.Sprintf("JSON %.0f KB", float64(st.Size())/1e3)
		},
	}, nil
}

// serveUnfinished measures pacer serve while 30 clients each send the
// start of a 60 MB SET and never finish it; Ctrl-C after 10 s.
func serveUnfinished(e *env) (*job, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", port)
	var sent atomic.Int64
	const clients, size = 30, 60 << 20
	return &job{
		args:      []string{"serve", "--port", port, "--bind", "127.0.0.1"},
		interrupt: 10 * time.Second,
		during: func(_ int, stop <-chan struct{}) {
			var conns []net.Conn
			var mu sync.Mutex
			defer func() {
				mu.Lock()
				for _, c := range conns {
					c.Close()
				}
				mu.Unlock()
			}()
			if !waitListening(addr, 5*time.Second) {
				return
			}
			var wg sync.WaitGroup
			for range clients {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					continue
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n", size); err != nil {
						return
					}
					chunk := make([]byte, 256<<10)
					for left := size - 1; left > 0; left -= len(chunk) {
						select {
						case <-stop:
							return
						default:
						}
						c.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
						k, err := c.Write(chunk[:min(len(chunk), left)])
						sent.Add(int64(k))
						if err != nil {
							if ne, ok := err.(net.Error); ok && ne.Timeout() {
								left += len(chunk) - k // not read yet: try again
								continue
							}
							return
						}
					}
				}()
			}
			<-stop
			mu.Lock()
			for _, c := range conns {
				c.Close()
			}
			mu.Unlock()
			wg.Wait()
		},
		note: func() string { return fmt.Sprintf("%.0f MB sent by the clients", float64(sent.Load())/1e6) },
	}, nil
}

// maxClients: run -c 2000 against a redis-server with maxclients 100.
func maxClients(e *env) (*job, error) {
	j := &job{}
	r, err := e.ownRedis(j, "--maxclients", "100")
	if err != nil {
		return j, err
	}
	j.args = []string{"run", "-p", r.Port, "-c", "2000", "--rate", "10k", "--duration", "3s", "-t", "get", "-q"}
	return j, nil
}

// sigstop: run --rate 200k for 26 s against a redis-server stopped from
// 3 s to 23 s.
func sigstop(e *env) (*job, error) {
	j := &job{}
	r, err := e.ownRedis(j)
	if err != nil {
		return j, err
	}
	j.args = []string{"run", "-p", r.Port, "--rate", "200k", "--duration", "26s", "-t", "get", "-r", "100000", "-q"}
	j.during = func(_ int, stop <-chan struct{}) {
		select {
		case <-stop:
			return
		case <-time.After(3 * time.Second):
		}
		r.Signal(syscall.SIGSTOP)
		defer r.Signal(syscall.SIGCONT)
		select {
		case <-stop:
		case <-time.After(20 * time.Second):
		}
	}
	return j, nil
}

// freePort returns a loopback port nothing listens on (yet).
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port, nil
}

func waitListening(addr string, within time.Duration) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return true
		}
	}
	return false
}
