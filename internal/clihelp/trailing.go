package clihelp

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/internal/usage"
)

// Trailing picks flags out of the arguments after the files (pacer
// report a.json --plot a.png): urfave/cli stops parsing flags at the first
// argument. values are the flags that take a value, bools those that do
// not; the rest are paths ("-", standard input or output, among them). set
// says which values were given. An unknown flag, or one without its value,
// is a usage error in urfave/cli's words.
func Trailing(args []string, values map[string]*string, bools map[string]*bool) (paths []string, set map[string]bool, err error) {
	return TrailingLists(args, values, bools, nil)
}

// TrailingLists is Trailing with flags that may be repeated (--label A
// --label=B): lists collects their values in order.
func TrailingLists(args []string, values map[string]*string, bools map[string]*bool, lists map[string]*[]string) (paths []string, set map[string]bool, err error) {
	set = map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case a == "-" || !strings.HasPrefix(a, "-"):
			paths = append(paths, a)
			continue
		case bools[name] != nil && !hasValue:
			*bools[name] = true
			continue
		case values[name] == nil && lists[name] == nil:
			return nil, nil, usage.Errorf("flag provided but not defined: %s", a)
		case !hasValue && i+1 >= len(args):
			return nil, nil, usage.Errorf("flag needs an argument: %s", a)
		case !hasValue:
			i++
			value = args[i]
		}
		if l := lists[name]; l != nil {
			*l = append(*l, value)
		} else {
			*values[name] = value
		}
		set[name] = true
	}
	return paths, set, nil
}

// FlagsFirst moves the flags that follow a command's files in front of
// them (pacer replay trace.txt --speed 2 reads as pacer replay --speed 2
// trace.txt), so that every command takes its flags before or after its
// files: urfave/cli stops reading flags at the first argument that is
// none. flags are the command's; a flag that takes a value takes the
// argument after it along (unless given as --name=value). Everything
// from a "--" on stays where it is, as do "-" (standard input) and a
// last flag without its value; unknown flags move (urfave/cli then names
// them).
func FlagsFirst(flags []cli.Flag, args []string) []string {
	takesValue := map[string]bool{}
	for _, f := range flags {
		tv, ok := f.(interface{ TakesValue() bool })
		for _, n := range f.Names() {
			takesValue[n] = ok && tv.TakesValue()
		}
	}
	var front, files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			files = append(files, args[i:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			files = append(files, a)
			continue
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if takesValue[name] && !inline && i+1 == len(args) {
			files = append(files, a) // its value missing: the command says so
			break
		}
		front = append(front, a)
		if takesValue[name] && !inline {
			i++
			front = append(front, args[i])
		}
	}
	return append(front, files...)
}
