package usage

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func flags(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func TestOptionError(t *testing.T) {
	inner := Option("key-dist", "{key-dist} %q needs a keyspace ({r} N)", "zipf:1")
	for _, c := range []struct {
		err         error
		goText, cli string
		usage       bool
	}{
		{Flagf("arrival", "{arrival} %q: want uniform or poisson", "x"),
			`Arrival "x": want uniform or poisson`, `--arrival "x": want uniform or poisson`, true},
		{Option("", "lower {c}, {max-buffer} or {max-inflight}"),
			"lower Conns, MaxBuffer or MaxInflight", "lower -c, --max-buffer or --max-inflight", false},
		// A setting named at run time, and the user's text holding what
		// looks like a placeholder: only the format's are rendered.
		{Flagf("rates", "{rates} lists the rates: drop %v (%q)", Name("step"), "{rate}"),
			`Rates lists the rates: drop Step ("{rate}")`, `--rates lists the rates: drop --step ("{rate}")`, true},
		// Braces that name no setting stay as they are.
		{Flagf("cluster", "{cluster}: give them one {hash tag}, such as {tag}"),
			"Cluster: give them one {hash tag}, such as {tag}", "--cluster: give them one {hash tag}, such as {tag}", true},
		// An OptionError inside another's arguments, and one wrapped by
		// fmt.Errorf: both spelt by the renderer.
		{Flagf("command", "{command}: %v", inner),
			`Command: KeyDist "zipf:1" needs a keyspace (Keyspace N)`, `--command: --key-dist "zipf:1" needs a keyspace (-r N)`, true},
		{fmt.Errorf("a.txt: %w", inner),
			`a.txt: KeyDist "zipf:1" needs a keyspace (Keyspace N)`, `a.txt: --key-dist "zipf:1" needs a keyspace (-r N)`, false},
		{Errorf("%s: %w", "plain", io.EOF), "plain: EOF", "plain: EOF", true},
	} {
		if got := c.err.Error(); got != c.goText {
			t.Errorf("Error() = %q, want %q", got, c.goText)
		}
		if got := Render(c.err, flags); got != c.cli {
			t.Errorf("Render = %q, want %q", got, c.cli)
		}
		if Is(c.err) != c.usage {
			t.Errorf("%q: Is = %v, want %v", c.goText, Is(c.err), c.usage)
		}
	}
	var oe *OptionError
	if err := Flagf("max-inflight", "{max-inflight} %d: want 1 to %d", 0, 10); !errors.As(err, &oe) || oe.Option != "MaxInflight" || oe.Flag != "max-inflight" {
		t.Errorf("errors.As: %+v", oe)
	}
	sentinel := errors.New("not TLS")
	err := Option("", "%w: a plain port? drop {tls}: %w", sentinel, io.EOF)
	if !errors.Is(err, sentinel) || !errors.Is(err, io.EOF) {
		t.Errorf("%v does not wrap its %%w arguments", err)
	}
	if got := Render(err, flags); got != "not TLS: a plain port? drop --tls: EOF" {
		t.Errorf("Render = %q", got)
	}
}
