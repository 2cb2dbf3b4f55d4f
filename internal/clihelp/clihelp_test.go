package clihelp

import (
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// TestArgs: the ways users ask for help.
func TestArgs(t *testing.T) {
	for in, want := range map[string]string{
		"pacer -h":                 "pacer --help",
		"pacer help":               "pacer --help",
		"pacer help run":           "pacer run --help",
		"pacer bench -h":           "pacer bench --help",
		"pacer run --rate 1k -h":   "pacer run --rate 1k --help",
		"pacer bench -h 10.0.0.5":  "pacer bench -h 10.0.0.5",
		"pacer bench -h host -q":   "pacer bench -h host -q",
		"pacer run -- ECHO -h":     "pacer run -- ECHO -h",
		"pacer":                    "pacer",
		"pacer run --rate 1k -t x": "pacer run --rate 1k -t x",
	} {
		if got := strings.Join(Args(strings.Fields(in)), " "); got != want {
			t.Errorf("Args(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRender(t *testing.T) {
	cmd := &cli.Command{Name: "run", Usage: "send", ArgsUsage: "[ARGS]", Description: "More.", Flags: []cli.Flag{
		&cli.StringFlag{Name: "rate", Usage: "target `RATE`", Category: "load"},
		&cli.IntFlag{Name: "c", Value: 50, Usage: "`N` connections", Category: "load"},
		&cli.IntFlag{Name: "db", Usage: "database `N`", DefaultText: "0", Category: "target"},
		&cli.DurationFlag{Name: "drain", Value: time.Second, Usage: "wait `DURATION`", Category: "load"},
		&cli.BoolFlag{Name: "q", Usage: "quiet", Category: "load"},
		&cli.BoolFlag{Name: "old", Usage: "gone", Category: "refused"},
		&cli.BoolFlag{Name: "older", Usage: "gone too", Category: "refused"},
		&cli.BoolFlag{Name: "hidden", Usage: "in no category shown"},
	}}
	p := Page{Program: "tool", Categories: []string{"target", "load", "refused"}, NamesOnly: "refused", Footer: "EXIT CODES\n"}
	want := `NAME:
   tool run - send

USAGE:
   tool run [flags] [ARGS]

More.

TARGET:
   --db N  database N (default 0)

LOAD:
   --rate RATE       target RATE
   -c N              N connections (default 50)
   --drain DURATION  wait DURATION (default 1s)
   -q                quiet

REFUSED:
   --old, --older

   --help  show this help

EXAMPLES:
   tool run --rate 1

EXIT CODES
`
	if got := p.Render(cmd, []string{"tool run --rate 1"}); got != want {
		t.Errorf("Render:\n%s\nwant:\n%s", got, want)
	}
	if p.Set(cmd, "x {{y}}"); !strings.Contains(cmd.CustomHelpTemplate, `x {{"{{"}}y}}`) {
		t.Errorf("Set does not escape the template: %q", cmd.CustomHelpTemplate)
	}
	if ph, u := Placeholder("no placeholder"); ph != "VALUE" || u != "no placeholder" {
		t.Errorf("Placeholder = %q, %q", ph, u)
	}
}
