package conn

import (
	"context"
	"fmt"
	"sync"
)

// maxConcurrentDials bounds the dials in progress at once: thousands of
// simultaneous connects would overflow the server's accept backlog (Linux
// caps it at net.core.somaxconn, 4096 and on older kernels 128), and a
// dropped SYN is only retried a second later.
const maxConcurrentDials = 32

// DialAll opens n connections with o, at most maxConcurrentDials at a time. If any
// fails, the others are closed and the error says how many failed and why.
func DialAll(ctx context.Context, o Options, n int) ([]*Conn, error) {
	conns, failed, first := DialSome(ctx, o, n)
	if failed == 0 {
		return conns, nil
	}
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
	return nil, fmt.Errorf("%d of %d connections to %s failed: %w", failed, n, o.Addr, first)
}

// DialSome opens n connections with o, at most maxConcurrentDials at a time, and
// returns them with nil where a dial failed, the number that failed and
// the first error. Callers decide whether a partial pool will do.
func DialSome(ctx context.Context, o Options, n int) (conns []*Conn, failed int, first error) {
	conns = make([]*Conn, n)
	errs := make([]error, n)
	sem := make(chan struct{}, maxConcurrentDials)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			conns[i], errs[i] = Dial(ctx, o)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			if first == nil {
				first = err
			}
			failed++
		}
	}
	return conns, failed, first
}
