// Package clihelp renders a urfave/cli command's help the way pacer prints
// it: NAME, USAGE, the flags grouped by category in a fixed order, each
// with its placeholder and default, the examples and a footer (the exit
// codes). It also turns the ways users ask for help into --help, where -h
// means the host, as in redis-benchmark.
package clihelp

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// Page says how every command's help is laid out.
type Page struct {
	// Program heads the NAME and USAGE lines ("pacer").
	Program string
	// Categories lists the flag categories in the order help shows them;
	// a flag of another category is not shown.
	Categories []string
	// NamesOnly is a category whose flags are listed by name only, on one
	// line (flags accepted and refused, say).
	NamesOnly string
	// Footer ends every help.
	Footer string
}

// Set renders cmd's help with its examples into cmd.CustomHelpTemplate,
// escaped so that urfave/cli's template prints it as is, gives cmd a help
// subcommand of its own, and returns cmd.
func (p Page) Set(cmd *cli.Command, examples ...string) *cli.Command {
	cmd.CustomHelpTemplate = strings.ReplaceAll(p.Render(cmd, examples), "{{", `{{"{{"}}`)
	if cmd.Command("help") == nil {
		cmd.Subcommands = append(cmd.Subcommands, helpSubcommand())
	}
	return cmd
}

// helpSubcommand is a command's own "help" (pacer run help, as pacer run
// --help; pacer run help X, as urfave/cli answers it). Left to itself,
// urfave/cli gives every command its one package-level help command and
// writes to it on every run, so two runs of Main at once — the tests run
// many in one process — would race on it.
func helpSubcommand() *cli.Command {
	return &cli.Command{
		Name:            "help",
		Aliases:         []string{"h"},
		Usage:           "Shows a list of commands or help for one command",
		ArgsUsage:       "[command]",
		HideHelpCommand: true,
		Action: func(c *cli.Context) error {
			parent := c.Lineage()[1]
			if c.Args().Present() {
				return cli.ShowCommandHelp(parent, c.Args().First())
			}
			tmpl := parent.Command.CustomHelpTemplate
			if tmpl == "" {
				tmpl = cli.CommandHelpTemplate
			}
			cli.HelpPrinter(c.App.Writer, tmpl, parent.Command)
			return nil
		},
	}
}

// Render returns cmd's help text.
func (p Page) Render(cmd *cli.Command, examples []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "NAME:\n   %s %s - %s\n\nUSAGE:\n   %s %s [flags] %s\n", p.Program, cmd.Name, cmd.Usage, p.Program, cmd.Name, cmd.ArgsUsage)
	if cmd.Description != "" {
		fmt.Fprintf(&b, "\n%s\n", cmd.Description)
	}
	for _, cat := range p.Categories {
		var rows [][2]string
		for _, f := range cmd.Flags {
			df, ok := f.(cli.DocGenerationFlag)
			if !ok || categoryOf(f) != cat {
				continue
			}
			rows = append(rows, flagRow(df))
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n", strings.ToUpper(cat))
		if cat == p.NamesOnly {
			var names []string
			for _, r := range rows {
				names = append(names, r[0])
			}
			fmt.Fprintf(&b, "   %s\n", strings.Join(names, ", "))
			continue
		}
		width := 0
		for _, r := range rows {
			width = max(width, len(r[0]))
		}
		for _, r := range rows {
			fmt.Fprintf(&b, "   %-*s  %s\n", width, r[0], r[1])
		}
	}
	b.WriteString("\n   --help  show this help\n")
	if len(examples) > 0 {
		b.WriteString("\nEXAMPLES:\n")
		for _, e := range examples {
			fmt.Fprintf(&b, "   %s\n", e)
		}
	}
	b.WriteString("\n" + p.Footer)
	return b.String()
}

func categoryOf(f cli.Flag) string {
	if cf, ok := f.(cli.CategorizableFlag); ok {
		return cf.GetCategory()
	}
	return ""
}

// flagRow renders a flag as "-n N" / "--rate RATE" and its usage with
// the default.
func flagRow(f cli.DocGenerationFlag) [2]string {
	name := f.Names()[0]
	dash := "--"
	if len(name) == 1 {
		dash = "-"
	}
	placeholder, usage := Placeholder(f.GetUsage())
	left := dash + name
	if f.TakesValue() {
		left += " " + placeholder
	}
	if def := defaultOf(f); def != "" {
		usage += " (default " + def + ")"
	}
	return [2]string{left, usage}
}

// Placeholder takes the `PLACEHOLDER` out of a usage text, as urfave/cli
// does, and returns it with the usage without its backquotes; a usage
// without one gives VALUE.
func Placeholder(usage string) (string, string) {
	i := strings.Index(usage, "`")
	if i < 0 {
		return "VALUE", usage
	}
	j := strings.Index(usage[i+1:], "`")
	if j < 0 {
		return "VALUE", usage
	}
	name := usage[i+1 : i+1+j]
	return name, usage[:i] + name + usage[i+1+j+1:]
}

// defaultOf is the default a flag's help shows ("" for none): its
// DefaultText, else a non-zero value of a string, int or duration flag.
func defaultOf(f cli.DocGenerationFlag) string {
	switch v := Unwrap(f).(type) {
	case *cli.StringFlag:
		if v.DefaultText != "" {
			return v.DefaultText
		}
		return v.Value
	case *cli.IntFlag:
		if v.DefaultText != "" {
			return v.DefaultText
		}
		if v.Value != 0 {
			return strconv.Itoa(v.Value)
		}
	case *cli.Int64Flag:
		return v.DefaultText
	case *cli.Uint64Flag:
		return v.DefaultText
	case *cli.Float64Flag:
		return v.DefaultText
	case *cli.DurationFlag:
		if v.DefaultText != "" {
			return v.DefaultText
		}
		if v.Value != 0 {
			return v.Value.String()
		}
	}
	return ""
}

// Args turns the ways users ask for help into --help, before the flags
// are parsed: `P -h`, `P help`, `P help CMD`, and a trailing -h with no
// host after it (`P bench -h`). `P bench -h HOST` still means the host,
// as in redis-benchmark, and after -- a -h is the command's own argument.
func Args(args []string) []string {
	if len(args) < 2 {
		return args
	}
	switch args[1] {
	case "-h", "-help", "help", "--h":
		if len(args) >= 3 && args[1] == "help" {
			return []string{args[0], args[2], "--help"}
		}
		if len(args) == 2 {
			return []string{args[0], "--help"}
		}
	}
	last := args[len(args)-1]
	if len(args) >= 3 && last == "-h" {
		for _, a := range args[2 : len(args)-1] {
			if a == "--" {
				return args // after --, -h is the command's own argument
			}
		}
		out := append([]string{}, args[:len(args)-1]...)
		return append(out, "--help")
	}
	return args
}
