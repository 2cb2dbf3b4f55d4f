package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestReadInput(t *testing.T) {
	t.Parallel()
	good, err := craftDoc("open", craft(t, fixture{name: "GET", mode: "open", rate: 100, seconds: 1, base: 0.1, interval: 1, seed: 1})).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// A seed above 2^53 keeps every digit in the configuration shown.
	seeded := bytes.Replace(good, []byte(`"seed": 7`), []byte(`"seed": 1796231323334759688`), 1)
	in, err := ReadInput("x.json", seeded)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range in.Config() {
		found = found || c.Key == "seed" && c.Value == "1796231323334759688"
	}
	if !found {
		t.Errorf("config %v: the seed lost digits", in.Config())
	}
	for name, data := range map[string]string{
		"empty":           "",
		"not json":        "hello",
		"other schema":    `{"schema":"x/v1","tests":[]}`,
		"bad histogram":   strings.Replace(string(good), `"response": "`, `"response": "!!`, 1),
		"truncated":       string(good[:len(good)/2]),
		"tests not array": `{"schema":"pacer.result/v1","tests":{}}`,
	} {
		if _, err := ReadInput("x.json", []byte(data)); err == nil {
			t.Errorf("%s: no error", name)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error on several lines: %q", name, err)
		}
	}
}

func TestMatchTests(t *testing.T) {
	t.Parallel()
	mk := func(names ...string) *Document {
		d := craftDoc("open")
		for _, n := range names {
			d.Tests = append(d.Tests, Test{Name: n, Mode: "open", Errors: map[string]uint64{}})
		}
		return d
	}
	a := input(t, "a", mk("GET", "SET", "GET"))
	b := input(t, "b", mk("SET", "GET", "INCR"))
	ms := MatchTests([]Input{a, b})
	var got []string
	for _, m := range ms {
		s := m.Name + ":"
		for _, tt := range m.Tests {
			if tt == nil {
				s += "-"
			} else {
				s += "x"
			}
		}
		got = append(got, s)
	}
	// The second GET of a has no counterpart in b; INCR is only in b.
	if strings.Join(got, " ") != "GET:xx SET:xx GET:x- INCR:-x" {
		t.Fatalf("matched %v", got)
	}
	// The open loops of two compare documents match in order, whatever
	// their rates.
	e := input(t, "e", mk("GET (closed loop)", "GET (open loop at 1000 req/s)", "GET (open loop at 1600 req/s)"))
	f := input(t, "f", mk("GET (closed loop)", "GET (open loop at 2000 req/s)", "GET (open loop at 3200 req/s)"))
	if ms := MatchTests([]Input{e, f}); len(ms) != 3 || ms[2].Tests[1] == nil || ms[2].Tests[1].Name != "GET (open loop at 3200 req/s)" {
		t.Fatalf("compare documents: %+v", ms)
	}
	// Ids, where documents have them, match tests whose names differ.
	raw := func(d *Document, ids ...string) Input {
		bs, err := d.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		s := string(bs)
		for i, id := range ids {
			s = strings.Replace(s, `"name": "`+d.Tests[i].Name+`"`, `"id": "`+id+`", "name": "`+d.Tests[i].Name+`"`, 1)
		}
		in, err := ReadInput("r", []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	c := raw(mk("GET (open loop at 1000 req/s)"), "get")
	d := raw(mk("GET (open loop at 2000 req/s)"), "get")
	if ms := MatchTests([]Input{c, d}); len(ms) != 1 || ms[0].Tests[1] == nil {
		t.Fatalf("ids did not match: %+v", ms)
	}
}
