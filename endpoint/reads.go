package endpoint

import (
	"context"
	"fmt"
	"net"
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

// Replicas returns the addresses of the primary's replicas that are up:
// as the sentinels list them, or else as the primary itself does (INFO
// replication: its replicas online).
func (t *Target) Replicas(ctx context.Context) ([]string, error) {
	if t.follower != nil {
		var out []string
		for _, r := range t.follower.Replicas() {
			if r.Up {
				out = append(out, r.Addr)
			}
		}
		return out, nil
	}
	o := t.Current()
	o.OnTLSHandshake = nil
	cctx, cancel := context.WithTimeout(ctx, conn.DefaultDialTimeout)
	defer cancel()
	v, err := conn.Do(cctx, o, "INFO", "replication")
	if err != nil {
		return nil, fmt.Errorf("asking %s for its replicas: %w", o.Addr, err)
	}
	return onlineReplicas(v.Str), nil
}

// onlineReplicas reads INFO replication's "slaveN:ip=…,port=…,state=online"
// lines.
func onlineReplicas(info string) []string {
	var out []string
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(k, "slave") || k == "slave_read_only" || strings.HasPrefix(k, "slave_") {
			continue
		}
		f := map[string]string{}
		for _, kv := range strings.Split(v, ",") {
			if a, b, ok := strings.Cut(kv, "="); ok {
				f[a] = b
			}
		}
		if f["state"] == "online" && f["ip"] != "" && f["port"] != "" {
			out = append(out, net.JoinHostPort(f["ip"], f["port"]))
		}
	}
	return out
}
