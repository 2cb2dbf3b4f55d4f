package scenarios

// ScanTrace reads a trace once before a replay sends it: it checks every
// line and the policy, and sums up what the replay will do (what
// `pacer replay --dry-run` shows). A script call is judged by what the
// trace shows it ran (MONITOR's lua lines after it).

import (
	"encoding/hex"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Bounds of a summary's tallies.
const (
	// TraceTallyCap is how many distinct names (commands, clients,
	// databases) a tally tracks; the rest are counted together as Other.
	TraceTallyCap = 100_000
	// TraceTopN is how many names a tally lists.
	TraceTopN = 20
	// maxTallyName cuts longer names (a hostile trace's 1 MB command name)
	// before they are kept.
	maxTallyName = 128
)

// TraceCount is a name and how often it occurred, from which line on.
type TraceCount struct {
	Name      string
	Count     int64
	FirstLine int64
}

// TraceTally counts occurrences by name, in bounded memory.
type TraceTally struct {
	// Top lists the most frequent names, at most TraceTopN, by count
	// (ties: by name).
	Top []TraceCount
	// Distinct is how many names were tracked (at most TraceTallyCap).
	Distinct int
	// Other counts the occurrences of names past the cap.
	Other int64
}

// TraceDrop counts the commands of one name that the policy refused or
// skipped, with the first line and the reason.
type TraceDrop struct {
	Name      string
	Reason    string
	Count     int64
	FirstLine int64
	// Hint says what sends or leaves out the first one, where --allow
	// NAME and --skip NAME do not say it all ("" when they do).
	Hint string
}

// TracePeak is the busiest window of a trace: windows are Window long,
// aligned on the first command sent (windows [First+k·Window,
// First+(k+1)·Window)).
type TracePeak struct {
	Window time.Duration
	Count  int64 // commands in the busiest window
	// Offset is where that window starts, from the first command, and
	// Line the line of its first command.
	Offset time.Duration
	Line   int64
}

// Rate is the peak in commands per second.
func (p TracePeak) Rate() float64 {
	if p.Window <= 0 {
		return 0
	}
	return float64(p.Count) / p.Window.Seconds()
}

// TraceSummary is what ScanTrace found. The counts of commands, their
// span, rates and tallies are about the commands the replay will send.
type TraceSummary struct {
	Name   string
	Format TraceFormat
	Gzip   bool
	// Bytes and SHA256 describe the file as it is on disk (compressed, if
	// it is), read once.
	Bytes  int64
	SHA256 string // hex
	Lines  int64
	// Records counts the commands read (MONITOR's script lines aside),
	// Commands those the replay sends: Records = Commands + refused +
	// skipped.
	Records  int64
	Commands int64
	// First and Last are the timestamps (ns, the trace's clock) of the
	// first and last command sent; Span is Last − First.
	First, Last int64
	Span        time.Duration
	// MeanRate is Commands over Span, per second (0 for a span of 0).
	MeanRate            float64
	Peak1s, Peak10ms    TracePeak
	ByCommand, ByClient TraceTally
	ByDB                TraceTally // names are the database numbers
	// Lua counts the MONITOR lines of commands run by scripts that are
	// not sent (their call is).
	Lua int64
	// Blank counts the blank lines (and MONITOR's "OK"), BlankBytes
	// their bytes.
	Blank, BlankBytes int64
	// Refused and Skipped list the commands the policy kept out, by name
	// in the order of their first line; RefusedTotal and SkippedTotal sum
	// them.
	Refused, Skipped           []TraceDrop
	RefusedTotal, SkippedTotal int64
	// Backwards counts timestamps the reader moved up to the one before;
	// MaxBackstep is the largest such step.
	Backwards   int64
	MaxBackstep time.Duration
}

// ScanTrace reads the rest of r once, checks every command against policy
// (nil: the default policy) and sums the trace up. A malformed line ends
// the scan with its error, and so does a forbidden name (Forbid). A
// trace with refused commands gives the summary and an error at the
// first of them that counts them all; one with no command to send gives
// an error that says why. r is not closed.
//
// A script call (EVAL, EVALSHA, FCALL, their read-only variants) is
// refused when a command it ran, as the trace shows it, is refused, or is
// left out by --skip (a script is sent whole or not at all); one whose
// effects the trace does not show (a JSON trace, MONITOR output without
// its lua lines) is refused unless --allow names it.
func ScanTrace(r *TraceReader, policy *Policy) (TraceSummary, error) {
	s := TraceSummary{Name: r.Name(), Peak1s: TracePeak{Window: time.Second}, Peak10ms: TracePeak{Window: 10 * time.Millisecond}}
	var (
		byCommand, byClient, byDB tally
		refused, skipped          drops
		w1, w10                   window
		name, client, num         []byte
		call                      scriptCall
		err                       error
	)
	w1.peak, w10.peak = &s.Peak1s, &s.Peak10ms
	effects := effectPolicy(policy)
	settle := func() {
		if why, hint := call.verdict(); why != "" {
			refused.addHint(call.name, why, hint, call.line)
			s.Commands--
		}
		call = scriptCall{}
	}
	for {
		var rec *TraceRecord
		rec, err = r.Next()
		if err != nil {
			break
		}
		if rec.Effect {
			if a, why := policy.Decide(rec); a == Forbid {
				return s, forbidden(r.Name(), rec, why)
			}
			if call.line != 0 && rec.ScriptLine == call.line {
				if ferr := call.effect(r.Name(), effects, rec); ferr != nil {
					return s, ferr
				}
			}
			if !policy.SendsScriptCommands() {
				s.Lua++
				continue
			}
		} else if call.line != 0 {
			settle()
		}
		s.Records++
		name = AppendCommandName(name[:0], rec.Argv)
		action, reason := policy.Classify(rec.Argv)
		switch action {
		case Forbid:
			return s, forbidden(r.Name(), rec, reason)
		case Refuse:
			refused.add(name, reason, rec.Line)
			continue
		case Skip:
			skipped.add(name, reason, rec.Line)
			continue
		}
		if !rec.Effect && IsScriptCall(rec.Argv) {
			call = scriptCall{line: rec.Line, name: append(call.name[:0], name...), allowed: policy.AllowsScript(rec.Argv)}
		}
		if s.Commands == 0 {
			s.First = rec.T
		}
		s.Commands++
		s.Last = rec.T
		byCommand.add(name, rec.Line)
		client = append(client[:0], rec.Client...)
		byClient.add(client, rec.Line)
		num = strconv.AppendInt(num[:0], int64(rec.DB), 10)
		byDB.add(num, rec.Line)
		w1.add(rec.T-s.First, rec.Line)
		w10.add(rec.T-s.First, rec.Line)
	}
	if err == io.EOF && call.line != 0 {
		settle()
	}
	w1.end()
	w10.end()
	st := r.Stats()
	s.Format, s.Gzip, s.Bytes, s.SHA256 = st.Format, st.Gzip, st.Bytes, hex.EncodeToString(st.SHA256[:])
	s.Lines, s.Backwards, s.MaxBackstep = st.Lines, st.Backwards, st.MaxBackstep
	s.Blank, s.BlankBytes = st.Blank, st.BlankBytes
	s.Span = time.Duration(s.Last - s.First)
	if s.Span > 0 {
		s.MeanRate = float64(s.Commands) / s.Span.Seconds()
	}
	s.ByCommand, s.ByClient, s.ByDB = byCommand.result(), byClient.result(), byDB.result()
	s.Refused, s.RefusedTotal = refused.result()
	s.Skipped, s.SkippedTotal = skipped.result()
	if err != io.EOF {
		return s, err
	}
	if s.RefusedTotal > 0 {
		first := s.Refused[0]
		hint := first.Hint
		if hint == "" {
			hint = "--allow NAME,... sends them, --skip NAME,... leaves them out"
		}
		none := ""
		if s.Commands == 0 {
			none = " (and no command to replay without them)"
		}
		return s, &TraceError{Name: s.Name, Line: first.FirstLine,
			Msg: printable(first.Name) + " is refused (" + first.Reason + "); the trace has " +
				strconv.FormatInt(s.RefusedTotal, 10) + " refused" + none + ": " + listDrops(s.Refused) + ": " + hint}
	}
	if s.Commands == 0 {
		return s, &TraceError{Name: s.Name, Msg: "no command to replay: " + nothingToSend(s)}
	}
	return s, nil
}

// nothingToSend says why a trace has no command to send.
func nothingToSend(s TraceSummary) string {
	if s.Records == 0 {
		if s.Lua > 0 {
			return "the trace has only commands run by scripts (" + strconv.FormatInt(s.Lua, 10) + " lines)"
		}
		return "the trace is empty"
	}
	var parts []string
	if s.RefusedTotal > 0 {
		parts = append(parts, strconv.FormatInt(s.RefusedTotal, 10)+" refused ("+listDrops(s.Refused)+")")
	}
	if s.SkippedTotal > 0 {
		parts = append(parts, strconv.FormatInt(s.SkippedTotal, 10)+" skipped ("+listDrops(s.Skipped)+")")
	}
	return strings.Join(parts, ", ")
}

// listDrops is "FLUSHALL 3, KEYS 1", the first few.
func listDrops(l []TraceDrop) string {
	var b strings.Builder
	for i, d := range l {
		if i == 5 {
			b.WriteString(", ...")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(printable(d.Name))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(d.Count, 10))
	}
	return b.String()
}

// printable returns name as it is when it is printable ASCII, quoted
// and escaped otherwise: a trace's names can hold any byte.
func printable(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] < 0x20 || name[i] >= 0x7f || name[i] == '"' {
			return strconv.Quote(name)
		}
	}
	return name
}

// window finds the busiest aligned window of timestamps that never
// decrease.
type window struct {
	peak  *TracePeak
	index int64 // the current window
	count int64
	line  int64 // its first command's line
	start bool
}

func (w *window) add(offset, line int64) {
	k := offset / int64(w.peak.Window)
	if !w.start || k != w.index {
		w.end()
		w.index, w.count, w.line, w.start = k, 0, line, true
	}
	w.count++
}

func (w *window) end() {
	if w.start && w.count > w.peak.Count {
		w.peak.Count = w.count
		w.peak.Offset = time.Duration(w.index * int64(w.peak.Window))
		w.peak.Line = w.line
	}
}

// tally counts by name up to TraceTallyCap names.
type tally struct {
	m     map[string]*TraceCount
	other int64
}

func (t *tally) add(name []byte, line int64) {
	if len(name) > maxTallyName {
		name = name[:maxTallyName]
	}
	if c, ok := t.m[string(name)]; ok {
		c.Count++
		return
	}
	if t.m == nil {
		t.m = map[string]*TraceCount{}
	}
	if len(t.m) >= TraceTallyCap {
		t.other++
		return
	}
	t.m[string(name)] = &TraceCount{Name: string(name), Count: 1, FirstLine: line}
}

func (t *tally) result() TraceTally {
	r := TraceTally{Distinct: len(t.m), Other: t.other}
	l := make([]TraceCount, 0, len(t.m))
	for _, c := range t.m {
		l = append(l, *c)
	}
	sort.Slice(l, func(i, j int) bool {
		if l[i].Count != l[j].Count {
			return l[i].Count > l[j].Count
		}
		return l[i].Name < l[j].Name
	})
	if len(l) > TraceTopN {
		l = l[:TraceTopN]
	}
	if len(l) > 0 {
		r.Top = l
	}
	return r
}

// drops counts refused or skipped commands by name, up to TraceTallyCap
// names (the rest under "other").
type drops struct {
	m map[string]*TraceDrop
}

func (d *drops) add(name []byte, reason string, line int64) {
	d.addHint(name, reason, "", line)
}

func (d *drops) addHint(name []byte, reason, hint string, line int64) {
	if len(name) > maxTallyName {
		name = name[:maxTallyName]
	}
	if c, ok := d.m[string(name)]; ok {
		c.Count++
		return
	}
	if d.m == nil {
		d.m = map[string]*TraceDrop{}
	}
	if len(d.m) >= TraceTallyCap {
		name, reason = []byte("other"), "various"
		if c, ok := d.m["other"]; ok {
			c.Count++
			return
		}
	}
	d.m[string(name)] = &TraceDrop{Name: string(name), Reason: reason, Count: 1, FirstLine: line, Hint: hint}
}

func (d *drops) result() ([]TraceDrop, int64) {
	var l []TraceDrop
	var total int64
	for _, c := range d.m {
		l = append(l, *c)
		total += c.Count
	}
	sort.Slice(l, func(i, j int) bool { return l[i].FirstLine < l[j].FirstLine })
	return l, total
}
