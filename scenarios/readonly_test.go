package scenarios

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/redistest"
	"github.com/pacer-load/pacer/internal/testrun"
)

// TestReadOnlyMatchesCommandInfo: every command the table speaks for is a
// read exactly when the server's COMMAND flags it readonly, subcommands
// of containers included; every readonly command the server lists is in
// the table.
func TestReadOnlyMatchesCommandInfo(t *testing.T) {
	testrun.SkipShort(t, "starts a redis-server")
	t.Parallel()
	s := redistest.Start(t)
	v, err := s.Query("COMMAND")
	if err != nil {
		t.Fatal(err)
	}
	server := map[string]bool{} // name (container|sub) -> readonly
	add := func(c any) {
		e, _ := c.([]any)
		if len(e) < 3 {
			return
		}
		name := strings.ToLower(fmt.Sprint(e[0]))
		flags, _ := e[2].([]any)
		ro := false
		for _, f := range flags {
			ro = ro || f == "readonly"
		}
		server[name] = ro
	}
	cmds, _ := v.([]any)
	for _, c := range cmds {
		add(c)
		if e, _ := c.([]any); len(e) >= 10 {
			subs, _ := e[9].([]any)
			for _, sc := range subs {
				add(sc)
			}
		}
	}
	if len(server) < 200 {
		t.Fatalf("COMMAND listed %d commands", len(server))
	}
	for name, ro := range server {
		if ro && !readOnlyCommands[name] {
			t.Errorf("%s is readonly on the server, not in the table", name)
		}
	}
	for name := range readOnlyCommands {
		if !server[name] {
			t.Errorf("%s is in the table, not readonly on the server", name)
		}
	}
	for name := range writers {
		if ro, ok := server[name]; !ok || ro {
			t.Errorf("%s: the table says it writes; the server knows it %v, readonly %v", name, ok, ro)
		}
	}
}

func TestReadOnly(t *testing.T) {
	for _, c := range []struct {
		args        []string
		read, known bool
	}{
		{[]string{"GET", "k"}, true, true},
		{[]string{"set", "k", "v"}, false, true},
		{[]string{"LRANGE", "k", "0", "9"}, true, true},
		{[]string{"OBJECT", "ENCODING", "k"}, true, true},
		{[]string{"OBJECT"}, false, true},
		{nil, false, true},
		{[]string{"JSON.GET", "k"}, false, false},
	} {
		if r, k := ReadOnly(c.args); r != c.read || k != c.known {
			t.Errorf("%v: read %v known %v, want %v %v", c.args, r, k, c.read, c.known)
		}
	}
}
