package clihelp

import (
	"strings"

	"github.com/pacer-load/pacer/internal/usage"
)

// Trailing picks flags out of the arguments after the files (pacer
// report a.json --plot a.png): urfave/cli stops parsing flags at the first
// argument. values are the flags that take a value, bools those that do
// not; the rest are paths ("-", standard input or output, among them). set
// says which values were given. An unknown flag, or one without its value,
// is a usage error in urfave/cli's words.
func Trailing(args []string, values map[string]*string, bools map[string]*bool) (paths []string, set map[string]bool, err error) {
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
		case values[name] == nil:
			return nil, nil, usage.Errorf("flag provided but not defined: %s", a)
		case !hasValue && i+1 >= len(args):
			return nil, nil, usage.Errorf("flag needs an argument: %s", a)
		case !hasValue:
			i++
			value = args[i]
		}
		*values[name], set[name] = value, true
	}
	return paths, set, nil
}

// TrailingRepeated takes a flag that may be repeated (--label A --label=B)
// out of the arguments after the files, and returns the rest and its
// values.
func TrailingRepeated(args []string, name string) (rest, values []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		n, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case a == "-" || !strings.HasPrefix(a, "-") || n != name:
			rest = append(rest, a)
			continue
		case !hasValue && i+1 >= len(args):
			return nil, nil, usage.Errorf("flag needs an argument: %s", a)
		case !hasValue:
			i++
			value = args[i]
		}
		values = append(values, value)
	}
	return rest, values, nil
}
