package pacer

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/pacer-load/pacer/embedded"
)

// Faults make the embedded target misbehave on purpose, as `pacer serve`'s
// flags do.
type Faults struct {
	// Stall freezes the server for Stall every Every (--stall, --every).
	Stall, Every time.Duration
	// Delay adds service time per command: "100us" (fixed), "exp:100us"
	// (exponential with that mean), "uniform:50us-150us" (--delay).
	Delay string
	// ErrorRate answers that share of commands with an error (0 to 1).
	ErrorRate float64
	// Seed makes delays and errors reproducible.
	Seed uint64
}

// Server is an embedded target serving RESP in this process.
type Server struct {
	srv *embedded.Server
}

// Serve starts the embedded target on a free loopback port (Addr says
// which). Runs against it are judged knowing it shares pacer's process, as
// `pacer run --embedded` is. Close stops it.
func Serve(f Faults) (*Server, error) {
	faults := embedded.Faults{Stall: f.Stall, Every: f.Every, ErrorRate: f.ErrorRate, Seed: f.Seed}
	if f.Delay != "" {
		d, err := embedded.ParseDelay(f.Delay)
		if err != nil {
			return nil, &ConfigError{Field: "Delay", Err: errors.New(strings.TrimPrefix(err.Error(), "Delay "))}
		}
		faults.Delay = d
	}
	if err := faults.Validate(); err != nil {
		return nil, &ConfigError{Field: "Faults", Err: err}
	}
	srv, err := embedded.Start(embedded.Config{Faults: faults})
	if err != nil {
		return nil, err
	}
	served.Lock()
	served.addrs[srv.Addr()]++
	served.Unlock()
	return &Server{srv: srv}, nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.srv.Addr() }

// Close stops the server and closes its clients' connections.
func (s *Server) Close() error {
	served.Lock()
	if served.addrs[s.Addr()]--; served.addrs[s.Addr()] <= 0 {
		delete(served.addrs, s.Addr())
	}
	served.Unlock()
	return s.srv.Close()
}

// served are the embedded targets this process serves, by address: a run
// against one is judged as sharing pacer's process (its hiccups are the
// server's too).
var served = struct {
	sync.Mutex
	addrs map[string]int
}{addrs: map[string]int{}}

func inProcess(addr string) bool {
	served.Lock()
	defer served.Unlock()
	return served.addrs[addr] > 0
}
