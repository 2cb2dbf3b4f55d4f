package main

import (
	"context"
	"fmt"
	"io"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/serverinfo"
)

// serverSide asks the server under test about itself before a run and
// around each test (package serverinfo), over connections of its own and
// outside the measured window. A refusal is said once on stderr; nothing
// here fails a run.
type serverSide struct {
	ctx    context.Context
	p      *serverinfo.Prober
	stderr io.Writer
	// id is what the server said before the run.
	id *serverinfo.Identity
}

// askServer identifies the server o connects to.
func askServer(ctx context.Context, o conn.Options, stderr io.Writer) *serverSide {
	o.OnTLSHandshake = nil // its handshakes are not the load's
	s := &serverSide{ctx: ctx, p: serverinfo.New(o), stderr: stderr}
	s.id = s.p.Identify(ctx)
	s.id.Error = secretsFrom(ctx).redact(s.id.Error)
	s.notices()
	return s
}

// noteConfig says on stderr that the server refused CONFIG GET (bench
// says it in redis-benchmark's words instead).
func (s *serverSide) noteConfig() {
	if s.id.ConfigRefused != "" {
		fmt.Fprintf(s.stderr, "pacer: the server refuses CONFIG GET (%s): its settings are unknown\n",
			secretsFrom(s.ctx).redact(s.id.ConfigRefused))
	}
}

// notices prints the refusals met so far, each once.
func (s *serverSide) notices() {
	for _, n := range s.p.Notice() {
		fmt.Fprintf(s.stderr, "pacer: %s\n", secretsFrom(s.ctx).redact(n))
	}
}

// before reads the server's counters just before a test.
func (s *serverSide) before() *serverinfo.Snapshot {
	b := s.p.Before(s.ctx)
	s.notices()
	return b
}

// since returns what the server counted since before.
func (s *serverSide) since(before *serverinfo.Snapshot) *serverinfo.Stats {
	st := s.p.Since(s.ctx, before)
	st.Error = secretsFrom(s.ctx).redact(st.Error)
	s.notices()
	return st
}
