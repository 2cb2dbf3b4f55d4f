package drivertest

import (
	"context"
	"strconv"
	"testing"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/scenarios"
	"github.com/pacer-load/pacer/scheduler"
)

// Dial opens n connections to addr with the drivers' clock, no probe,
// and at most maxInflight requests in flight on each (0: no limit).
func Dial(t testing.TB, addr string, n, maxInflight int) []*conn.Conn {
	t.Helper()
	conns, err := conn.DialAll(context.Background(), conn.Options{Addr: addr, SkipProbe: true, Now: scheduler.Now, MaxInflight: maxInflight}, n)
	if err != nil {
		t.Fatal(err)
	}
	return conns
}

// PingStream is a stream of PING and the length of one command, the
// cmdLen a Server takes.
func PingStream(t testing.TB) (*scenarios.Stream, int) {
	t.Helper()
	tpl, err := scenarios.Compile("PING", []string{"PING"}, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return scenarios.NewStream(tpl, 1), tpl.Len()
}

// MixNames is a mix of two named commands, a (GET, weight 3) and b (SET,
// weight 1): a stream per seed, and the names in the series' order.
func MixNames(t testing.TB) (func(seed uint64) scheduler.Commands, []string) {
	t.Helper()
	r, err := scenarios.BuildRecipe("", []scenarios.Custom{
		{Name: "a", Args: []string{"GET", "a"}, Weight: 3}, {Name: "b", Args: []string{"SET", "b", "x"}, Weight: 1}}, scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Build()
	if err != nil {
		t.Fatal(err)
	}
	return func(seed uint64) scheduler.Commands { return scenarios.NewMixStream(m, seed, scenarios.Uniform{}) }, []string{"a", "b"}
}

// CommandCalls is how many times the server has run cmd (lower case), as
// INFO commandstats counts them: 0 for a command it never ran.
func CommandCalls(t testing.TB, s *redistest.Server, cmd string) int {
	t.Helper()
	info, err := s.Info("commandstats")
	if err != nil {
		t.Fatal(err)
	}
	v := info["cmdstat_"+cmd]
	// calls=N,usec=...
	if len(v) < 6 {
		return 0
	}
	end := 6
	for end < len(v) && v[end] != ',' {
		end++
	}
	n, _ := strconv.Atoi(v[6:end])
	return n
}
