package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where Server serves the metrics.
const Path = "/metrics"

// ErrAddrInUse is returned by Listen when another process holds the port.
var ErrAddrInUse = errors.New("the address is already in use")

// CheckAddr reports whether addr is HOST:PORT with a port from 0 to 65535
// (HOST may be empty: every interface; PORT 0: a free port).
func CheckAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("want HOST:PORT, such as 127.0.0.1:9464")
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("port %q: want 0 to 65535", port)
	}
	return nil
}

// Server serves a Collector's metrics, and the Go runtime's and the
// process's (go_*, process_*: the generator's own CPU and memory), as
// Prometheus text or OpenMetrics (as the scraper asks) at Path.
type Server struct {
	// Collector holds the tests being served.
	Collector *Collector
	ln        net.Listener
	srv       *http.Server
	served    chan error
}

// Listen binds addr (exactly the address given) and serves until Close.
// A port held by another process is ErrAddrInUse.
func Listen(addr string) (*Server, error) {
	if err := CheckAddr(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, ErrAddrInUse
		}
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err
		}
		return nil, err
	}
	c := NewCollector()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle(Path, promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, Timeout: 10 * time.Second}))
	s := &Server{
		Collector: c,
		ln:        ln,
		srv:       &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute},
		served:    make(chan error, 1),
	}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the server listens on (with the real port when 0
// was asked).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server: a scrape in progress may finish (for at most a
// second), then every connection is closed. A nil Server has nothing to
// stop.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	if serr := <-s.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
