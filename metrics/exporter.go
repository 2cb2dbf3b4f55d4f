package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where Exporter serves the metrics.
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

// Config says what Listen serves and how.
type Config struct {
	// Addr is HOST:PORT (see CheckAddr), bound exactly as given.
	Addr string
	// Buckets are the latency histograms' upper bounds (nil:
	// DefaultBuckets; ParseBuckets reads a list).
	Buckets []time.Duration
	// MaxConns caps the connections held at once (0: DefaultMaxConns).
	MaxConns int
	// Linger is how long Linger keeps serving after the last test.
	Linger time.Duration
}

// Exporter serves a Collector's metrics, and the Go runtime's and the
// process's (go_*, process_*: the generator's own CPU and memory), as
// Prometheus text or OpenMetrics (as the scraper asks) at Path. It holds
// at most Config.MaxConns connections, and an error never reaches a
// client as more than one line (no stack, no source path).
type Exporter struct {
	// Collector holds the tests being served.
	Collector *Collector
	linger    time.Duration
	ln        *limitListener
	srv       *http.Server
	served    chan error
}

// Listen binds cfg.Addr (exactly the address given) and serves until
// Close. A port held by another process is ErrAddrInUse.
func Listen(cfg Config) (*Exporter, error) {
	if err := CheckAddr(cfg.Addr); err != nil {
		return nil, err
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	ln, err := net.Listen("tcp", cfg.Addr)
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
	c := NewCollector(cfg.Buckets)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	lim := newLimitListener(ln, cfg.MaxConns)
	mux := http.NewServeMux()
	mux.Handle(Path, oneLineErrors(promhttpHandler(reg)))
	s := &Exporter{
		Collector: c,
		linger:    cfg.Linger,
		ln:        lim,
		srv: &http.Server{
			Handler:           lim.tracked(mux),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       time.Minute,
			MaxHeaderBytes:    maxHeaderBytes,
			ConnState:         lim.connState,
			ConnContext: func(ctx context.Context, c net.Conn) context.Context {
				return context.WithValue(ctx, connKey{}, c)
			},
			// The package never prints: net/http would log a handler's
			// panic, with its stack, on stderr.
			ErrorLog: log.New(io.Discard, "", 0),
		},
		served: make(chan error, 1),
	}
	go func() { s.served <- s.srv.Serve(lim) }()
	return s, nil
}

// promhttpHandler serves reg in the format the scraper asks for; a scrape
// that takes over 10 s is an error.
func promhttpHandler(reg prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, Timeout: 10 * time.Second})
}

// maxHeaderBytes bounds a request's header: a scraper sends a few hundred
// bytes, and each connection may hold this much.
const maxHeaderBytes = 16 << 10

// Loopback reports whether the server listens on a loopback address only
// (127.0.0.0/8 or ::1), where no other machine can scrape it.
func (s *Exporter) Loopback() bool { return isLoopback(s.ln.Addr()) }

func isLoopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

// SetScope sets the labels target and shard of the tests to come (see
// Collector.SetScope); a nil Exporter ignores it.
func (s *Exporter) SetScope(target, shard string) {
	if s != nil {
		s.Collector.SetScope(target, shard)
	}
}

// Linger keeps serving after the last test for Config.Linger, so that the
// last scrape sees the final numbers (and pacer_test_running 0): it
// returns once that time has passed or ctx is done. It returns at once on
// a nil Exporter, without Config.Linger, when ctx is already done (an
// interrupted run) or when no test was watched; otherwise it first calls
// note, if not nil, with the time it will wait. Call Close after it.
func (s *Exporter) Linger(ctx context.Context, note func(time.Duration)) {
	if s == nil || s.linger <= 0 || ctx.Err() != nil || !s.Collector.Watched() {
		return
	}
	if note != nil {
		note(s.linger)
	}
	t := time.NewTimer(s.linger)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Addr is the address the server listens on (with the real port when 0
// was asked).
func (s *Exporter) Addr() string { return s.ln.Addr().String() }

// Close stops the server: a scrape in progress may finish (for at most a
// second), then every connection is closed. A nil Exporter has nothing to
// stop.
func (s *Exporter) Close() error {
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
