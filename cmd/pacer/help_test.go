package main

import (
	"io"
	"regexp"
	"strings"
	"testing"
)

// helpSections splits a command's --help into its flag sections: each
// flag ("-h", "--slo") and the section it is listed in, and the sections
// in order.
func helpSections(t *testing.T, cmd string) (map[string]string, []string) {
	t.Helper()
	code, out, stderr := pacer(t, cmd, "--help")
	if code != exitOK {
		t.Fatalf("%s --help: exit %d %s", cmd, code, stderr)
	}
	flags := map[string]string{}
	var order []string
	section := ""
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasSuffix(l, ":") && l == strings.ToUpper(l) && !strings.HasPrefix(l, " "):
			section = strings.TrimSuffix(l, ":")
		case strings.HasPrefix(l, "   -") && section != "":
			flags[strings.Fields(l)[0]] = section
			if len(order) == 0 || order[len(order)-1] != section {
				order = append(order, section)
			}
		}
	}
	return flags, order
}

// TestHelpGroups: every command lists its flags in the same
// groups: TARGET, LOAD, WORKLOAD, SLO AND TRUST (--slo, --slo-window,
// --lag-limit, --pacing and the measurement flags), OUTPUT, the tuning
// flags and the shard flags in groups of their own, TLS last. Before,
// --slo was under OUTPUT, --pacing, the tuning and the shard flags under
// LOAD, the measurement flags in a group of their own, and TLS second.
func TestHelpGroups(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"-h": "TARGET", "--cluster": "TARGET", "-c": "LOAD", "--rate": "LOAD", "--duration": "LOAD", "-n": "LOAD",
		"-t": "WORKLOAD", "-d": "WORKLOAD", "-r": "WORKLOAD",
		"--slo": "SLO AND TRUST", "--slo-window": "SLO AND TRUST", "--lag-limit": "SLO AND TRUST", "--pacing": "SLO AND TRUST",
		"--receive-clock": "SLO AND TRUST", "--hiccup-interval": "SLO AND TRUST",
		"-q": "OUTPUT", "--json": "OUTPUT", "--interval": "OUTPUT",
		"--max-backlog": "TUNING", "--max-buffer": "TUNING", "--max-inflight": "TUNING",
		"--shard": "SHARD", "--start-at": "SHARD", "--start-in": "SHARD",
		"--tls": "TLS", "--cacert": "TLS",
	}
	for _, cmd := range append(loadCommands, "replay") {
		flags, order := helpSections(t, cmd)
		for f, section := range want {
			if got, ok := flags[f]; ok && got != section {
				t.Errorf("%s --help lists %s under %s, want %s", cmd, f, got, section)
			}
		}
		if len(order) == 0 || order[len(order)-1] != "TLS" {
			t.Errorf("%s --help: sections %v, want TLS last", cmd, order)
		}
	}
}

// TestHostThenFlagIsAUsageError: -h followed by a word that
// starts with - is a mistake, in every command that takes -h, not the
// host "--rate"; -h HOST and a trailing -h (help) are unchanged.
func TestHostThenFlagIsAUsageError(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "-h", "--rate", "1k"},
		{"run", "--rate", "1k", "-h", "-q"},
		{"bench", "-h", "-n", "10"},
		{"sweep", "-h", "--rates", "1k"},
		{"compare", "-h", "--rate", "1k"},
		{"replay", "-h", "--speed", "2", "trace.txt"},
		{"fill", "-h", "-r", "10"},
	} {
		code, out, stderr := pacer(t, args...)
		if code != exitUsage || out != "" || stderr != "pacer: -h takes a host; help is --help\n" {
			t.Errorf("pacer %q: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
	if code, out, _ := pacer(t, "run", "--rate", "1k", "-h"); code != exitOK || !strings.Contains(out, "pacer run - ") {
		t.Errorf("a trailing -h is help: exit %d", code)
	}
	if code, _, stderr := pacer(t, "bench", "-h", "127.0.0.1", "-p", closedPort(t), "-n", "1", "-q"); code != exitFailed || strings.Contains(stderr, "help is --help") {
		t.Errorf("-h HOST: exit %d %q", code, stderr)
	}
}

// TestRunSendsGetWithoutTests: run without -t or a command
// runs what sweep runs by default (GET), and -t all the whole suite.
func TestRunSendsGetWithoutTests(t *testing.T) {
	t.Parallel()
	doc, _ := runJSON(t, anyVerdict, "run", "--embedded", "--rate", "20k", "-n", "20", "-c", "2", "-q", "--lag-limit", "1s")
	if len(doc.Tests) != 1 || doc.Tests[0].Name != "GET" {
		t.Errorf("run without -t: %d tests, want GET alone", len(doc.Tests))
	}
	doc, _ = runJSON(t, anyVerdict, "run", "--embedded", "--rate", "20k", "-n", "20", "-c", "2", "-q", "--lag-limit", "1s", "-t", "all")
	if len(doc.Tests) < 21 {
		t.Errorf("run -t all: %d tests, want the whole suite", len(doc.Tests))
	}
	if code, _, stderr := pacer(t, "run", "--rate", "1k", "-t", " , "); code != exitUsage || !strings.Contains(stderr, "-t all for the whole suite") {
		t.Errorf("an empty -t: exit %d %q", code, stderr)
	}
	if _, out, _ := pacer(t, "run", "--help"); !strings.Contains(out, "Without -t or a command, run sends GET") || !strings.Contains(out, "(default get)") {
		t.Errorf("run --help does not say what runs without -t:\n%s", out)
	}
}

// TestVersionCommand: pacer version prints what --version
// prints.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	code, out, stderr := pacer(t, "version")
	_, want, _ := pacer(t, "--version")
	if code != exitOK || out != want || stderr != "" || !strings.Contains(out, version) {
		t.Errorf("pacer version: exit %d %q %q, want %q", code, out, stderr, want)
	}
	if code, _, _ := pacer(t, "version", "x"); code != exitUsage {
		t.Errorf("pacer version x: exit %d, want 2", code)
	}
}

// TestHelpExamplesUseNoPrivateAddress: help examples use
// loopback or a placeholder (-h HOST), never a private address a reader
// might copy.
func TestHelpExamplesUseNoPrivateAddress(t *testing.T) {
	t.Parallel()
	private := regexp.MustCompile(`\b(10\.\d+|192\.168|172\.(1[6-9]|2\d|3[01]))\.\d+`)
	pages := [][]string{{"--help"}}
	for _, c := range newAppCommands() {
		pages = append(pages, []string{c, "--help"})
	}
	for _, args := range pages {
		if _, out, _ := pacer(t, args...); private.MatchString(out) {
			t.Errorf("pacer %q shows a private address: %s", args, private.FindString(out))
		}
	}
}

// newAppCommands lists the app's commands.
func newAppCommands() []string {
	var names []string
	for _, c := range newApp(io.Discard, io.Discard).Commands {
		names = append(names, c.Name)
	}
	return names
}
