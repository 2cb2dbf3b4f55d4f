package target

import (
	"context"
	"strings"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/scenarios"
)

// Reads says, per command of r (in kind order), whether it only reads:
// by Redis 7.0's command flags (scenarios.ReadOnly), and for a command
// that table does not know (a module's, a newer server's) by the flags
// the server gives it in COMMAND INFO. A command the server does not
// answer for counts as a write: it stays with the primary. Nil for a nil
// recipe (a fixed command) or a recipe of writes only.
func (t *Target) Reads(ctx context.Context, r *scenarios.Recipe) []bool {
	if r == nil {
		return nil
	}
	all := r.Args()
	out := make([]bool, len(all))
	var ask []string
	for _, args := range all {
		if _, known := scenarios.ReadOnly(args); !known {
			ask = append(ask, strings.ToLower(args[0]))
		}
	}
	flags := t.readFlags(ctx, ask)
	any := false
	for i, args := range all {
		ro, known := scenarios.ReadOnly(args)
		if !known {
			ro = flags[strings.ToLower(args[0])]
		}
		out[i], any = ro, any || ro
	}
	if !any {
		return nil
	}
	return out
}

// readFlags asks the server whether each of names is flagged readonly
// (COMMAND INFO); a name it does not know, or a server that does not
// answer, reads as false.
func (t *Target) readFlags(ctx context.Context, names []string) map[string]bool {
	out := map[string]bool{}
	if len(names) == 0 {
		return out
	}
	o := t.Current()
	o.OnTLSHandshake = nil
	cctx, cancel := context.WithTimeout(ctx, conn.DefaultDialTimeout)
	defer cancel()
	v, err := conn.Do(cctx, o, append([]string{"COMMAND", "INFO"}, names...)...)
	if err != nil {
		return out
	}
	for i, e := range v.Elems {
		if i >= len(names) || e.Nil || len(e.Elems) < 3 {
			continue
		}
		for _, f := range e.Elems[2].Elems {
			if strings.EqualFold(f.Str, "readonly") {
				out[names[i]] = true
			}
		}
	}
	return out
}
