package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// fsyncProbe is a witness of the disk's speed independent of pacer: beside
// a run against an appendfsync-always server it appends 1 KB to a file in
// the server's directory and fdatasyncs it (what the server does for every
// write) every 20 ms, and times each. Its figures say whether the disk was
// slow during the run, so a gate that passes the regression can be told
// from one that missed it.
type fsyncProbe struct {
	stop chan struct{}
	done chan []time.Duration
}

func startFsyncProbe(dir string) (*fsyncProbe, error) {
	f, err := os.OpenFile(filepath.Join(dir, "fsync-probe"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	p := &fsyncProbe{stop: make(chan struct{}), done: make(chan []time.Duration, 1)}
	go func() {
		defer f.Close()
		block := make([]byte, 1024)
		var took []time.Duration
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				p.done <- took
				return
			case <-tick.C:
			}
			start := time.Now()
			if _, err := f.Write(block); err != nil {
				p.done <- took
				return
			}
			if err := f.Sync(); err != nil {
				p.done <- took
				return
			}
			took = append(took, time.Since(start))
		}
	}()
	return p, nil
}

// end stops the probe and says what its fsyncs took.
func (p *fsyncProbe) end() string {
	close(p.stop)
	took := <-p.done
	if len(took) == 0 {
		return "disk probe: no fsync timed"
	}
	slices.Sort(took)
	at := func(q float64) float64 {
		return float64(took[int(q*float64(len(took)-1))].Microseconds()) / 1e3
	}
	var slow int
	for _, d := range took {
		if d > time.Millisecond {
			slow++
		}
	}
	return fmt.Sprintf("disk probe (1 KB + fdatasync every 20 ms, %d): p50 %.3f ms, p99 %.3f ms, max %.3f ms, %.1f%% over 1 ms",
		len(took), at(0.5), at(0.99), at(1), 100*float64(slow)/float64(len(took)))
}
