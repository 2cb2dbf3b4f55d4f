package endpoint

import (
	"context"
	"strings"

	"github.com/pacer-load/pacer/cluster"
	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scenarios"
)

// Keys says, per command of a recipe (in kind order), where its keys are
// and whether they carry "{tag}", for routing it in a Redis Cluster.
type Keys struct {
	Specs  []cluster.KeySpec
	Tagged []bool
	// TagByKey says, per tagged command, that its key holds a number (a
	// key placeholder that runs through a keyspace), so its "{tag}" is
	// taken from the key's name (openloop.Cluster.TagByKey).
	TagByKey []bool
}

// ClusterKeys finds the keys of every command of r (asking the seed, with
// COMMAND INFO, about commands the table does not know). A command whose
// keys may fall in different slots is refused: every key must hold the
// same hash tag ("{tag}" counts: it is filled per request).
func ClusterKeys(ctx context.Context, seed conn.Options, r *scenarios.Recipe) (Keys, error) {
	all := r.Args()
	var names []string
	for _, args := range all {
		if len(args) > 0 {
			names = append(names, args[0])
		}
	}
	if err := cluster.Learn(ctx, seed, names); err != nil {
		return Keys{}, usage.Flagf("cluster", "{cluster}: %v", err)
	}
	k := Keys{Specs: make([]cluster.KeySpec, len(all)), Tagged: make([]bool, len(all)), TagByKey: make([]bool, len(all))}
	random := r.Opts.Random || r.Opts.Keyspace > 0 // else __rand_int__ is sent as it stands
	for i, args := range all {
		if len(args) == 0 {
			continue // inline: PING
		}
		spec, ok := KeySpecOf(args)
		if !ok {
			return Keys{}, usage.Flagf("cluster", "{cluster}: %s: the server does not say where its keys are", strings.ToUpper(args[0]))
		}
		k.Specs[i] = spec
		keys := keyArgs(args, spec)
		for _, key := range keys {
			if strings.Contains(key, scenarios.TagPlaceholder) {
				k.Tagged[i] = true
				if strings.Contains(key, scenarios.KeyPlaceholder) || random && strings.Contains(key, scenarios.RandPlaceholder) {
					k.TagByKey[i] = true
				}
			}
		}
		if len(keys) < 2 {
			continue
		}
		tag := string(cluster.HashTag([]byte(keys[0])))
		for _, key := range keys {
			t := string(cluster.HashTag([]byte(key)))
			if t == key || t != tag || strings.Contains(t, "__") {
				return Keys{}, usage.Flagf("cluster", "{cluster}: %s keys may span slots (%s, %s); give them one {hash tag}, such as {tag}",
					strings.ToUpper(args[0]), keys[0], key)
			}
		}
	}
	return k, nil
}

// KeySpecOf finds where args' keys are: by its subcommand's entry for a
// container command (OBJECT ENCODING key), else by its name's.
func KeySpecOf(args []string) (cluster.KeySpec, bool) {
	if len(args) > 1 {
		if spec, ok := cluster.KeyPositions(args[0] + " " + args[1]); ok {
			return spec, true
		}
	}
	return cluster.KeyPositions(args[0])
}

// NeedTags refuses a command of r with a key that does not carry "{tag}",
// for who: a closed loop with --cluster sends each connection's requests to
// one primary, as redis-benchmark --cluster does, and only "{tag}" takes
// that primary's slots.
func (k Keys) NeedTags(r *scenarios.Recipe, who string) error {
	for i, args := range r.Args() {
		if k.Specs[i].First > 0 && !k.Tagged[i] {
			return usage.Flagf("", "%s: %s has keys without {tag}: the closed loop sends each connection's requests to one primary, as redis-benchmark --cluster does; put {tag} in every key", who, strings.ToUpper(args[0]))
		}
	}
	return nil
}

// keyArgs returns the arguments of args that spec says are keys.
func keyArgs(args []string, spec cluster.KeySpec) []string {
	if spec.First <= 0 || spec.Step <= 0 {
		return nil
	}
	last := spec.Last
	if last < 0 {
		last += len(args)
	}
	var out []string
	for i := spec.First; i <= last && i < len(args); i += spec.Step {
		out = append(out, args[i])
	}
	return out
}
