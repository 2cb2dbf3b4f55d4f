package main

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pacer-load/pacer/internal/redistest"
)

// resetStats zeroes the servers' commandstats and errorstats (CONFIG
// RESETSTAT), so that what they count afterwards is the next run's.
func resetStats(e *env, nodes ...*redistest.Server) {
	for _, n := range nodes {
		if _, err := n.Do("CONFIG", "RESETSTAT"); err != nil {
			e.fail(fmt.Sprintf("CONFIG RESETSTAT on %s: %v", n.Addr, err))
		}
	}
}

// calls is how many times s ran command (commandstats), -1 when it did
// not say.
func calls(s *redistest.Server, command string) int64 {
	n, err := s.Calls(command)
	if err != nil {
		return -1
	}
	return int64(n)
}

// errorCount is errorstats' count of the error replies of prefix (MOVED,
// ASK) the server sent, -1 when it did not say.
func errorCount(s *redistest.Server, prefix string) int64 {
	info, err := s.Info("errorstats")
	if err != nil {
		return -1
	}
	v, ok := info["errorstat_"+prefix]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(v, "count="), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// sample is a server's MOVED and ASK replies so far, at an instant.
type sample struct {
	at         time.Time
	moved, ask int64
}

// redirectWatch samples each server's errorstats every 50 ms: when its
// MOVED and ASK replies were sent, to 50 ms.
type redirectWatch struct {
	mu      sync.Mutex
	samples map[string][]sample
	quit    chan struct{}
	done    chan struct{}
}

func watchRedirects(nodes []*redistest.Server) *redirectWatch {
	w := &redirectWatch{samples: map[string][]sample{}, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			for _, n := range nodes {
				at := time.Now()
				m, a := errorCount(n, "MOVED"), errorCount(n, "ASK")
				if m < 0 || a < 0 {
					continue
				}
				w.mu.Lock()
				w.samples[n.Addr] = append(w.samples[n.Addr], sample{at, m, a})
				w.mu.Unlock()
			}
			select {
			case <-w.quit:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *redirectWatch) stop() map[string][]sample {
	close(w.quit)
	<-w.done
	return w.samples
}

// movedBetween is how many MOVED replies the samples saw in (from, to],
// and when the first of them came (zero when none), to the samples'
// resolution.
func movedBetween(ss []sample, from, to time.Time) (n int64, first time.Time) {
	var prev *sample
	for i := range ss {
		s := &ss[i]
		if prev != nil && s.moved > prev.moved && s.at.After(from) && !s.at.After(to) {
			n += s.moved - prev.moved
			if first.IsZero() {
				first = s.at
			}
		}
		prev = s
	}
	return n, first
}

// lastSample is the final sample (zero when none).
func lastSample(ss []sample) sample {
	if len(ss) == 0 {
		return sample{}
	}
	return ss[len(ss)-1]
}

// waitStreaming waits until a key written on the primary is seen on each
// replica. A replica linked by a diskless full sync is sent the
// replication stream only from its first REPLCONF ACK, up to a second
// later: a run started before would measure that second as its lag.
func waitStreaming(e *env, primary *redistest.Server, replicas ...*redistest.Server) {
	key := fmt.Sprintf("topology:streaming:%d", time.Now().UnixNano())
	if _, err := primary.Do("SET", key, "1", "PX", "60000"); err != nil {
		e.fail(fmt.Sprintf("SET on %s: %v", primary.Addr, err))
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, r := range replicas {
		for {
			if v, err := r.Do("GET", key); err == nil && v == "1" {
				break
			}
			if time.Now().After(deadline) {
				e.fail(fmt.Sprintf("replica %s did not see a write on %s within 30 s", r.Addr, primary.Addr))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
