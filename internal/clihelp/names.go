package clihelp

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Why flags' names are cached: urfave/cli's Names() runs a regexp over
// every name at each call (FlagNames, a v1 migration check), and each
// command invocation calls it about F² times for F flags (runFlagActions
// asks IsSet of every flag, and IsSet of an unset flag walks every flag's
// Names()). With pacer's 60-80 flags a command that is 5,000 regexp
// replacements per invocation: 63 ms under the race detector, where the
// tests run the CLI in-process hundreds of times, against 8 ms with the
// names cached.

// CacheNames replaces each flag of cmds (and of their subcommands) by one
// that computes its names once. Every other method is the flag's own, so
// help, parsing and actions do not change; Unwrap gives the flag back for
// code that switches on its type. Flags of other types (HelpFlag's) are
// left as they are.
func CacheNames(cmds []*cli.Command) {
	for _, c := range cmds {
		for i, f := range c.Flags {
			c.Flags[i] = cacheNames(f)
		}
		CacheNames(c.Subcommands)
	}
}

// Unwrap returns the flag CacheNames wrapped (f itself for any other).
func Unwrap(f cli.Flag) cli.Flag {
	if w, ok := f.(interface{ Unwrap() cli.Flag }); ok {
		return w.Unwrap()
	}
	return f
}

func cacheNames(f cli.Flag) cli.Flag {
	switch v := f.(type) {
	case *cli.StringFlag:
		return stringFlag{v, names(v, v.Name, v.Aliases)}
	case *cli.BoolFlag:
		return boolFlag{v, names(v, v.Name, v.Aliases)}
	case *cli.DurationFlag:
		return durationFlag{v, names(v, v.Name, v.Aliases)}
	case *cli.IntFlag:
		return intFlag{v, names(v, v.Name, v.Aliases)}
	case *cli.Int64Flag:
		return int64Flag{v, names(v, v.Name, v.Aliases)}
	case *cli.Uint64Flag:
		return uint64Flag{v, names(v, v.Name, v.Aliases)}
	case *cli.Float64Flag:
		return float64Flag{v, names(v, v.Name, v.Aliases)}
	case *cli.StringSliceFlag:
		return stringSliceFlag{v, names(v, v.Name, v.Aliases)}
	}
	return f
}

// names is f.Names(): the name and the aliases, each cut at its first
// comma or space (the regexp's work), which only a name that holds one
// needs.
func names(f cli.Flag, name string, aliases []string) []string {
	all := append([]string{name}, aliases...)
	for _, n := range all {
		if strings.ContainsAny(n, ", ") {
			return f.Names()
		}
	}
	return all
}

// One type for each flag type pacer uses: embedding the pointer keeps
// every method (and so every interface) of the flag; only Names is
// answered from the cache.
type (
	stringFlag struct {
		*cli.StringFlag
		names []string
	}
	boolFlag struct {
		*cli.BoolFlag
		names []string
	}
	durationFlag struct {
		*cli.DurationFlag
		names []string
	}
	intFlag struct {
		*cli.IntFlag
		names []string
	}
	int64Flag struct {
		*cli.Int64Flag
		names []string
	}
	uint64Flag struct {
		*cli.Uint64Flag
		names []string
	}
	float64Flag struct {
		*cli.Float64Flag
		names []string
	}
	stringSliceFlag struct {
		*cli.StringSliceFlag
		names []string
	}
)

func (f stringFlag) Names() []string      { return f.names }
func (f boolFlag) Names() []string        { return f.names }
func (f durationFlag) Names() []string    { return f.names }
func (f intFlag) Names() []string         { return f.names }
func (f int64Flag) Names() []string       { return f.names }
func (f uint64Flag) Names() []string      { return f.names }
func (f float64Flag) Names() []string     { return f.names }
func (f stringSliceFlag) Names() []string { return f.names }

func (f stringFlag) Unwrap() cli.Flag      { return f.StringFlag }
func (f boolFlag) Unwrap() cli.Flag        { return f.BoolFlag }
func (f durationFlag) Unwrap() cli.Flag    { return f.DurationFlag }
func (f intFlag) Unwrap() cli.Flag         { return f.IntFlag }
func (f int64Flag) Unwrap() cli.Flag       { return f.Int64Flag }
func (f uint64Flag) Unwrap() cli.Flag      { return f.Uint64Flag }
func (f float64Flag) Unwrap() cli.Flag     { return f.Float64Flag }
func (f stringSliceFlag) Unwrap() cli.Flag { return f.StringSliceFlag }
