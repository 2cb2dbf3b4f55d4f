package clihelp

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHostTakesFlag: -h then a flag is the user asking for help (or
// forgetting the host), wherever the flags put it; a host, a value that
// happens to be -h, and anything after the flags are left alone.
func TestHostTakesFlag(t *testing.T) {
	flags := []cli.Flag{&cli.StringFlag{Name: "h"}, &cli.StringFlag{Name: "rate"}, &cli.StringFlag{Name: "a"}, &cli.BoolFlag{Name: "q"}}
	for in, want := range map[string]bool{
		"-h --rate 1k":           true,
		"--rate 1k -h -q":        true,
		"-q --h -p":              true,
		"-h -":                   true,
		"-h 127.0.0.1 --rate 1k": false,
		"-h=--rate":              false,
		"-a -h --rate 1k":        false, // -h is -a's value
		"--rate 1k":              false,
		"-q -- GET -h -x":        false,
		"SET k -h -x":            false,
		"-h":                     false, // alone: Args makes it --help
	} {
		if got := HostTakesFlag(flags, strings.Fields(in)); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}
