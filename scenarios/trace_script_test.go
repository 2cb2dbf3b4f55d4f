package scenarios

import (
	"errors"
	"strings"
	"testing"
)

// mon is a MONITOR trace of lines "SOURCE ARG ARG...", SOURCE "c" for a
// client or "lua", quoted as MONITOR quotes them.
func mon(lines ...string) string {
	var b strings.Builder
	b.WriteString("OK\n")
	for i, l := range lines {
		f := strings.Fields(l)
		src := "127.0.0.1:5000"
		if f[0] == "lua" {
			src = "lua"
		}
		b.WriteString("1.")
		b.WriteString(strings.Repeat("0", 5) + string(rune('1'+i)))
		b.WriteString(" [0 " + src + "]")
		for _, a := range f[1:] {
			b.WriteString(" " + string(appendMonitorArg(nil, []byte(a))))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestScanJudgesScripts: a script call is judged by the commands the
// trace shows it ran (MONITOR's lua lines after it): a refused one, or
// one --skip leaves out, refuses it, naming both lines; a call whose
// effects the trace does not show is refused unless --allow names it.
func TestScanJudgesScripts(t *testing.T) {
	allowFlush, _ := ParsePolicy("FLUSHALL", "")
	allowScripts, _ := ParsePolicy("scripts", "")
	allowEval, _ := ParsePolicy("EVAL", "")
	skipDel, _ := ParsePolicy("", "DEL")
	skipEval, _ := ParsePolicy("", "EVAL")
	skipScripts, _ := ParsePolicy("", "scripts")
	for _, c := range []struct {
		name  string
		p     *Policy
		trace string
		want  string // "" no error; else in it
		cmds  int64  // commands to send when it passes
	}{
		{"effects shown and sent", nil, mon("c EVAL s 0", "lua SET k v", "lua GET k", "c GET k"), "", 2},
		{"a refused effect", nil, mon("c GET k", "c EVAL s 0", "lua SET k v", "lua FLUSHALL", "c GET k"),
			"t:3: EVAL is refused (its script ran FLUSHALL at line 5: deletes every key); the trace has 1 refused: EVAL 1: --allow FLUSHALL sends such scripts, --skip EVAL leaves them out", 0},
		{"allowed by the effect's name", allowFlush, mon("c EVAL s 0", "lua FLUSHALL"), "", 1},
		{"not by the script's", allowEval, mon("c EVAL s 0", "lua FLUSHALL"), "t:2: EVAL is refused (its script ran FLUSHALL at line 3", 0},
		{"an effect --skip leaves out", skipDel, mon("c evalsha abc 0", "lua DEL k"),
			"t:2: EVALSHA is refused (its script ran DEL at line 3, which --skip leaves out: a script is sent whole or not at all)", 0},
		{"a default skip in a script", nil, mon("c EVAL s 0", "lua SELECT 1", "lua SET k v"), "", 1},
		{"effects unknown", nil, mon("c GET k", "c FCALL f 0", "c GET k"),
			"t:3: FCALL is refused (what the script ran is not in the trace: JSON traces, and MONITOR output without its lua lines, do not show it); the trace has 1 refused: FCALL 1: --allow scripts sends scripts whose effects the trace does not show, --skip FCALL leaves them out", 0},
		{"effects unknown at the end", nil, mon("c GET k", "c EVAL_RO s 0"), "t:3: EVAL_RO is refused", 0},
		{"--allow scripts", allowScripts, mon("c FCALL f 0", "c EVAL s 0"), "", 2},
		{"--allow EVAL", allowEval, mon("c EVAL s 0"), "", 1},
		{"--skip EVAL", skipEval, mon("c EVAL s 0", "lua FLUSHALL", "c GET k"), "", 1},
		{"--skip scripts", skipScripts, mon("c EVAL s 0", "lua FLUSHALL", "c FCALL f 0", "c GET k"), "", 1},
		{"effects of the script before only", nil, mon("c EVAL s 0", "lua GET k", "c SET a b", "lua FLUSHALL"), "", 2},
		{"each script by its own", nil, mon("c EVAL s 0", "lua GET k", "c EVAL t 0", "lua SWAPDB 0 1"), "t:4: EVAL is refused (its script ran SWAPDB at line 5", 0},
		{"a forbidden effect", nil, mon("c EVAL s 0", "lua FLUSHALL\x00x"), `t:3: "FLUSHALL\x00x" is refused whatever the flags`, 0},
		{"a forbidden name", nil, mon("c GET k", "c FLUSHALL\x00x"), `t:3: "FLUSHALL\x00x" is refused whatever the flags: the command's name holds a NUL byte`, 0},
	} {
		r, err := NewTraceReader(strings.NewReader(c.trace), "t", TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := ScanTrace(r, c.p)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && s.Commands != c.cmds:
			t.Errorf("%s: %d commands to send, want %d", c.name, s.Commands, c.cmds)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
		}
	}
	// --script-commands: the effects are sent as commands of their own
	// (and judged as such), the script still by them.
	p := (*Policy)(nil).WithScriptCommands()
	r, _ := NewTraceReader(strings.NewReader(mon("c EVAL s 0", "lua SET k v", "c GET k")), "t", TraceOptions{})
	if s, err := ScanTrace(r, p); err != nil || s.Commands != 3 || s.Lua != 0 {
		t.Errorf("--script-commands: %v %+v", err, s)
	}
	r, _ = NewTraceReader(strings.NewReader(mon("c EVAL s 0", "lua FLUSHALL")), "t", TraceOptions{})
	if _, err := ScanTrace(r, p); err == nil || !strings.Contains(err.Error(), "t:2: EVAL is refused") {
		t.Errorf("--script-commands, a refused effect: %v", err)
	}
}

// TestBlankLinesBounded: blank lines are counted, and past MaxBlank bytes
// of them the trace is refused at the line that crossed it; a reader
// whose Done is closed stops with ErrTraceInterrupted.
func TestBlankLinesBounded(t *testing.T) {
	text := "1.1 [0 a:1] \"GET\" \"k\"\n" + strings.Repeat("\n", 50) + "  \r\n" + strings.Repeat("\n", 100) + "1.2 [0 a:1] \"GET\" \"k\"\n"
	r, _ := NewTraceReader(strings.NewReader(text), "t", TraceOptions{})
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			break
		}
		n++
	}
	if st := r.Stats(); n != 2 || st.Blank != 151 || st.BlankBytes != 154 || st.Lines != 153 {
		t.Fatalf("%d records, %+v", n, st)
	}
	r, _ = NewTraceReader(strings.NewReader(text), "t", TraceOptions{MaxBlank: 120})
	var err error
	for err == nil {
		_, err = r.Next()
	}
	// Lines 2-51 are 50 bytes, line 52 four, line 53 the 55th byte.
	if err.Error() != "t:119: more than 120 bytes of blank lines: a trace has a command on every line (is this a trace?)" {
		t.Fatalf("%v", err)
	}
	done := make(chan struct{})
	close(done)
	r, _ = NewTraceReader(strings.NewReader(text), "t", TraceOptions{Done: done})
	if _, err := r.Next(); !errors.Is(err, ErrTraceInterrupted) || !strings.Contains(err.Error(), "interrupted while reading the trace") {
		t.Fatalf("%v", err)
	}
	long := strings.Repeat("1.1 [0 a:1] \"GET\" \"k\"\n", 3*interruptEvery)
	stop := make(chan struct{})
	r, _ = NewTraceReader(strings.NewReader(long), "t", TraceOptions{Done: stop})
	for i := 0; ; i++ {
		if i == interruptEvery {
			close(stop)
		}
		if _, err = r.Next(); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrTraceInterrupted) || r.Stats().Lines > 2*interruptEvery {
		t.Fatalf("%v after %d lines", err, r.Stats().Lines)
	}
}
