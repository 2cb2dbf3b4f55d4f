package clihelp

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// HostTakesFlag reports whether a command's arguments (after its name)
// give -h followed by a word that starts with "-": where -h is the host,
// as in redis-benchmark, `pacer run -h --rate 1k` would otherwise take
// "--rate" as the host and drop the rate. Arguments are read as the
// command parses them: a flag that takes a value skips the next one, and
// the flags end at the first argument that is not one, or at "--".
func HostTakesFlag(flags []cli.Flag, args []string) bool {
	takesValue := map[string]bool{}
	for _, f := range flags {
		if df, ok := f.(cli.DocGenerationFlag); ok && df.TakesValue() {
			for _, n := range f.Names() {
				takesValue[n] = true
			}
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return false
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if hasValue || !takesValue[name] {
			continue
		}
		if name == "h" && i+1 < len(args) && strings.HasPrefix(args[i+1], "-") {
			return true
		}
		i++ // the flag's value
	}
	return false
}
