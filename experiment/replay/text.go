package replay

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-load/pacer/internal/safetext"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scenarios"
)

// Text says what the replay will do, before it sends (and all that
// --dry-run prints): the trace's span, commands, mean and peak rates, its
// top commands, clients and databases, what the policy left out, and the
// replay's span and peak rates after the speed.
func (p *Plan) Text() string {
	s := p.Summary
	var b strings.Builder
	gz := ""
	if s.Gzip {
		gz = ", gzip"
	}
	fmt.Fprintf(&b, "trace %s: %s%s, %s, %d lines, sha256 %s\n", safetext.Escape(s.Name), s.Format, gz, bytesText(s.Bytes), s.Lines, s.SHA256[:min(16, len(s.SHA256))])
	fmt.Fprintf(&b, "  %d commands to send over %s: mean %s/s, peak %s/s in a second (at +%s, line %d), %s/s in 10 ms (at +%s, line %d)\n",
		s.Commands, s.Span.Round(time.Millisecond), rate(s.MeanRate), rate(s.Peak1s.Rate()), s.Peak1s.Offset.Round(time.Millisecond), s.Peak1s.Line,
		rate(s.Peak10ms.Rate()), s.Peak10ms.Offset.Round(time.Millisecond), s.Peak10ms.Line)
	fmt.Fprintf(&b, "  top commands  %s\n", tallyText(s.ByCommand, false))
	fmt.Fprintf(&b, "  top clients   %s\n", tallyText(s.ByClient, false))
	fmt.Fprintf(&b, "  databases     %s\n", tallyText(s.ByDB, true))
	if s.Lua > 0 {
		fmt.Fprintf(&b, "  left out      %d commands run by scripts (their EVAL, EVALSHA or FCALL is replayed, judged by them)\n", s.Lua)
	}
	for _, d := range s.Skipped {
		fmt.Fprintf(&b, "  skipped       %s × %d (from line %d): %s\n", safetext.Escape(d.Name), d.Count, d.FirstLine, safetext.Escape(d.Reason))
	}
	if s.Backwards > 0 {
		fmt.Fprintf(&b, "  clock steps   %d timestamps stepped back (at most %s): each sent with the command before it\n", s.Backwards, s.MaxBackstep)
	}
	loops := ""
	if p.Loops > 1 {
		loops = fmt.Sprintf(", %d loops of %s each", p.Loops, p.scaled(p.Length).Round(time.Millisecond))
	}
	fmt.Fprintf(&b, "replay at %s× speed%s: %d requests over %s, mean %s/s, peak %s/s in a second, %s/s in 10 ms\n",
		strconv.FormatFloat(p.Speed, 'g', 4, 64), loops, p.Requests, p.Span.Round(time.Millisecond),
		rate(s.MeanRate*p.Speed), rate(p.peak(s.Peak1s)), rate(p.peak(s.Peak10ms)))
	return b.String()
}

// peak is the replay's rate in the trace's busiest window of its kind:
// the window's commands come speed times as fast, but a window of the
// replay never holds more than the replay's requests.
func (p *Plan) peak(w scenarios.TracePeak) float64 {
	if w.Window <= 0 {
		return 0
	}
	n := min(float64(w.Count)*p.Speed, float64(p.Requests))
	return n / w.Window.Seconds()
}

func rate(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// tallyText lists a tally's top names with their counts.
func tallyText(t scenarios.TraceTally, db bool) string {
	if len(t.Top) == 0 {
		return "-"
	}
	var parts []string
	for i, c := range t.Top {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("… %d more", t.Distinct-i))
			break
		}
		name := safetext.Escape(c.Name)
		if name == "" {
			name = `""`
		}
		if db {
			name = "db " + name
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, c.Count))
	}
	if t.Other > 0 {
		parts = append(parts, fmt.Sprintf("others %d", t.Other))
	}
	return strings.Join(parts, ", ")
}

// Info is the trace's record in the JSON document.
func (p *Plan) Info() *report.Trace {
	s := p.Summary
	t := &report.Trace{Name: s.Name, Format: s.Format.String(), Gzip: s.Gzip, Bytes: s.Bytes, SHA256: s.SHA256, Lines: s.Lines,
		Records: s.Records, Commands: s.Commands, SpanS: s.Span.Seconds(), Speed: p.Speed, Loops: p.Loops,
		Requests: p.Requests, ReplaySpanS: p.Span.Seconds(), Lua: s.Lua, Skipped: s.SkippedTotal,
		ByCommand: map[string]int64{}}
	for _, c := range s.ByCommand.Top {
		t.ByCommand[c.Name] = c.Count
	}
	if s.ByCommand.Other > 0 || s.ByCommand.Distinct > len(s.ByCommand.Top) {
		var listed int64
		for _, c := range s.ByCommand.Top {
			listed += c.Count
		}
		t.ByCommand["other"] = s.Commands - listed
	}
	return t
}
