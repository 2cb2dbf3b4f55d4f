package scenarios

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/redistest"
)

// TestPolicyTableMatchesRedis holds the policy's table to a real
// redis-server's COMMAND: the commands it takes a subcommand for are the
// server's commands with subcommands (a NUL in a subcommand the policy
// did not look at could reach CONFIG SET), the names it refuses and
// skips are the server's, and so are the script calls.
func TestPolicyTableMatchesRedis(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := conn.Do(ctx, conn.Options{Addr: s.Addr}, "COMMAND")
	if err != nil {
		t.Fatal(err)
	}
	server := map[string]bool{} // "NAME" and "NAME SUB"
	withSubs := map[string]bool{}
	for _, e := range v.Elems {
		name := strings.ToUpper(e.Elems[0].Str)
		server[name] = true
		if len(e.Elems) > 9 && len(e.Elems[9].Elems) > 0 {
			withSubs[name] = true
			for _, sub := range e.Elems[9].Elems {
				server[strings.ReplaceAll(strings.ToUpper(sub.Elems[0].Str), "|", " ")] = true
			}
		}
	}
	for name, c := range commands {
		if c.container != withSubs[name] {
			t.Errorf("%s: the policy takes a subcommand %v, the server has subcommands %v", name, c.container, withSubs[name])
		}
		// Names of Redis 7.2 and later (WAITAOF) are welcome.
		if !server[name] && name != "WAITAOF" {
			t.Errorf("%s: in the policy's table, unknown to the server", name)
		}
	}
	for name := range withSubs {
		if !commands[name].container {
			t.Errorf("%s has subcommands: the policy must look at them", name)
		}
	}
	var scripts []string
	for name := range server {
		if !strings.Contains(name, " ") && (strings.HasPrefix(name, "EVAL") || strings.HasPrefix(name, "FCALL")) {
			scripts = append(scripts, name)
			if !commands[name].script {
				t.Errorf("%s runs a script: the policy must judge it by its effects", name)
			}
		}
	}
	if len(scripts) != len(scriptCalls) {
		t.Errorf("the server's script calls %v, the policy's %v", scripts, scriptCalls)
	}
}
