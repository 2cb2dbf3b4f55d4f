package metrics

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxConns is how many connections the metrics endpoint holds at
// once unless Config says otherwise: a few Prometheus servers and curls
// need a handful; every connection is a file descriptor the load may need.
const DefaultMaxConns = 64

// limitListener holds at most max accepted connections, so a flood of idle
// connections to the endpoint cannot take the file descriptors (and the
// memory) the run's own connections need. Unlike a listener that stops
// accepting when full (netutil.LimitListener), which would leave a flood
// queued in the kernel ahead of the next scrape, it makes room for each
// new connection by closing the oldest one that is not being served (one
// that sent nothing yet, or not a whole request, or idles between
// keep-alive requests); when every connection is being served, the new one
// is closed at once. A scrape in progress is never cut, and a scraper whose
// idle connection was closed reconnects.
type limitListener struct {
	net.Listener
	max   int
	mu    sync.Mutex
	conns map[net.Conn]*connInfo
	// shed counts the connections closed to stay within max.
	shed atomic.Uint64
}

// connInfo is whether a connection is being served (its handler runs),
// and when it last changed state.
type connInfo struct {
	serving bool
	since   time.Time
}

func newLimitListener(l net.Listener, max int) *limitListener {
	return &limitListener{Listener: l, max: max, conns: map[net.Conn]*connInfo{}}
}

// Accept returns the next connection, having closed one to make room for
// it when max are open.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.admit(c) {
			return c, nil
		}
		c.Close()
		l.shed.Add(1)
	}
}

// admit registers c, closing the oldest connection that serves no request
// if the listener is full; it reports false (c is to be closed) when every
// connection is serving one.
func (l *limitListener) admit(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) >= l.max {
		var victim net.Conn
		var oldest time.Time
		for vc, info := range l.conns {
			if info.serving {
				continue
			}
			if victim == nil || info.since.Before(oldest) {
				victim, oldest = vc, info.since
			}
		}
		if victim == nil {
			return false
		}
		delete(l.conns, victim)
		victim.Close() // its server goroutine sees the error and ends
		l.shed.Add(1)
	}
	l.conns[c] = &connInfo{since: time.Now()}
	return true
}

// connState is the http.Server's ConnState hook: it notes each
// connection's activity and forgets closed ones.
func (l *limitListener) connState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	info, ok := l.conns[c]
	if !ok {
		return
	}
	switch s {
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
	default:
		info.since = time.Now()
	}
}

// serve marks c as being served until the returned done is called (the
// handler's span): a connection in a handler is never closed to make room.
func (l *limitListener) serve(c net.Conn) (done func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	info, ok := l.conns[c]
	if !ok {
		return func() {}
	}
	info.serving = true
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		info.serving, info.since = false, time.Now()
	}
}

// connKey carries a request's connection in its context (ConnContext), for
// serve.
type connKey struct{}

// tracked wraps h so that l knows which connections are being served.
func (l *limitListener) tracked(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
			defer l.serve(c)()
		}
		h.ServeHTTP(w, r)
	})
}

// open returns how many connections the listener holds.
func (l *limitListener) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}
