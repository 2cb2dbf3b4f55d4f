package endpoint

import (
	"context"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/serverinfo"
)

// Server asks the server under test about itself before a run and around
// each test (package serverinfo), over connections of its own and outside
// the measured window. A refusal is said once; nothing here fails a run.
type Server struct {
	p      *serverinfo.Prober
	say    func(string)
	redact func(string) string
	// ID is what the server said before the run.
	ID *serverinfo.Identity

	// o reaches the server; a cluster's primaries are reached with it
	// (ForAddr), each by a prober of its own kept in nodes (MarkNodes).
	o     conn.Options
	nodes map[string]*serverinfo.Prober
}

// AskServer identifies the server o connects to; say receives the
// refusals (each once), redact cleans the server's error texts.
func AskServer(ctx context.Context, o conn.Options, say func(string), redact func(string) string) *Server {
	o.OnTLSHandshake = nil // its handshakes are not the load's
	if redact == nil {
		redact = func(s string) string { return s }
	}
	if say == nil {
		say = func(string) {}
	}
	s := &Server{p: serverinfo.New(o), say: say, redact: redact, o: o}
	s.ID = s.p.Identify(ctx)
	s.ID.Error = redact(s.ID.Error)
	s.notices()
	return s
}

// ConfigRefused is the server's refusal of CONFIG GET ("" when it
// answered), redacted.
func (s *Server) ConfigRefused() string { return s.redact(s.ID.ConfigRefused) }

// notices passes on the refusals met so far, each once.
func (s *Server) notices() {
	for _, n := range s.p.Notice() {
		s.say("pacer: " + s.redact(n))
	}
}

// Mark reads the server's counters now, just before a test, and returns
// what tells what the server counted since (nil from a nil Server).
func (s *Server) Mark(ctx context.Context) func() *serverinfo.Stats {
	if s == nil {
		return func() *serverinfo.Stats { return nil }
	}
	before := s.p.Before(ctx)
	s.notices()
	return func() *serverinfo.Stats {
		st := s.p.Since(ctx, before)
		st.Error = s.redact(st.Error)
		s.notices()
		return st
	}
}
