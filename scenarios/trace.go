package scenarios

// Trace readers: `pacer replay` sends the commands of a recorded trace at
// their recorded instants. This file reads a trace, streaming, in bounded
// memory: Redis MONITOR output (trace_monitor.go) or pacer's JSON lines
// (trace_json.go), either of them gzip-compressed.

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"time"
)

// TraceRecord is one command of a trace.
type TraceRecord struct {
	// T is the command's timestamp in nanoseconds, on the trace's own
	// clock: only differences between records matter. It never decreases
	// from one record to the next (see TraceReader).
	T int64
	// DB is the database the command ran in.
	DB int
	// Client names the connection that sent it, "" when the trace has
	// none: for MONITOR the source "127.0.0.1:60866", "[::1]:6379",
	// "unix:/path" or "lua".
	Client string
	// Argv is the command's name and arguments, exact bytes. The slices
	// are valid until the next call of Next.
	Argv [][]byte
	// Line is the record's 1-based line number in the (decompressed) file.
	Line int64
	// Effect marks a command a script ran (MONITOR's source "lua"), which
	// MONITOR shows right after the script's call: ScriptLine is the line
	// of that EVAL, EVALSHA, FCALL or read-only variant (0 when the record
	// before is no script call: the trace does not hold the call).
	Effect     bool
	ScriptLine int64
}

// TraceFormat is the format of a trace file.
type TraceFormat uint8

const (
	// TraceAuto detects the format from the first non-empty line: "{"
	// starts JSON lines, "OK", "+" or a digit starts MONITOR output.
	TraceAuto TraceFormat = iota
	// TraceMonitor is Redis MONITOR output as `redis-cli monitor` writes it.
	TraceMonitor
	// TraceJSON is pacer's JSON lines: one object per line,
	// {"t": 0.000125, "db": 0, "client": "c1", "argv": ["SET", "k", "v"]}.
	TraceJSON
)

// String is the format's name, as ParseTraceFormat reads it.
func (f TraceFormat) String() string {
	switch f {
	case TraceMonitor:
		return "monitor"
	case TraceJSON:
		return "json"
	}
	return "auto"
}

// ParseTraceFormat reads a format name: "auto" (or ""), "monitor" or "json".
func ParseTraceFormat(s string) (TraceFormat, error) {
	switch s {
	case "", "auto":
		return TraceAuto, nil
	case "monitor":
		return TraceMonitor, nil
	case "json", "jsonl":
		return TraceJSON, nil
	}
	return TraceAuto, fmt.Errorf("unknown trace format %q (want auto, monitor or json)", s)
}

// Limits of a trace reader.
const (
	// DefaultMaxTraceLine bounds a line (64 MiB), so a hostile or broken
	// file cannot take unbounded memory. Redis accepts arguments of up to
	// 512 MB, but MONITOR escapes a binary byte in 4, and a replay of
	// commands that large measures the network, not the server.
	DefaultMaxTraceLine = 64 << 20
	// DefaultMaxBackstep is how far a timestamp may go back before it is
	// an error rather than a clock step (see TraceReader).
	DefaultMaxBackstep = time.Second
	// maxInterned bounds the client names a reader keeps to hand out
	// without allocating; past it the cache starts again.
	maxInterned = 1 << 16
	// maxInternedLen is the longest client name that is cached.
	maxInternedLen = 256
	// DefaultMaxBlank bounds the bytes of blank lines (and MONITOR's "OK")
	// a trace may hold: a trace has a command on every line, and a gzip
	// file of nothing but newlines (4 GiB from 4 MiB) would otherwise be
	// read to its end, on every pass, to find nothing.
	DefaultMaxBlank = 64 << 20
	// interruptEvery is how many lines a reader reads between looks at
	// TraceOptions.Done (and at each read of the file).
	interruptEvery = 1 << 14
)

// ErrTraceInterrupted is wrapped by the error of a read that
// TraceOptions.Done ended.
var ErrTraceInterrupted = errors.New("interrupted")

// TraceOptions configure a TraceReader. The zero value is the default.
type TraceOptions struct {
	// Format forces a format; TraceAuto detects it.
	Format TraceFormat
	// MaxLine is the longest line accepted, in bytes. 0: DefaultMaxTraceLine.
	MaxLine int
	// MaxBlank is how many bytes of blank lines (and MONITOR "OK" lines)
	// the trace may hold in all before the reader refuses it. 0:
	// DefaultMaxBlank; negative: no limit.
	MaxBlank int64
	// Done, once closed, ends the read: Next returns an error wrapping
	// ErrTraceInterrupted (a context's Done, for a Ctrl-C). nil: never.
	Done <-chan struct{}
	// MaxBackstep is how far back a timestamp may step before the reader
	// refuses the line. 0: DefaultMaxBackstep; negative: no limit.
	MaxBackstep time.Duration
}

// TraceStats counts what a reader read and how it mended the timestamps.
type TraceStats struct {
	Format TraceFormat
	// Gzip is set when the file was gzip-compressed.
	Gzip bool
	// Lines read, blank and MONITOR "OK" lines included.
	Lines int64
	// Records returned by Next, the commands scripts ran included.
	Records int64
	// Lua counts the MONITOR lines of commands run by scripts (records
	// with Effect set).
	Lua int64
	// Blank counts the blank lines and MONITOR's "OK" lines, BlankBytes
	// their bytes (newlines included).
	Blank, BlankBytes int64
	// Backwards counts timestamps earlier than the record before, which
	// the reader moved up to it; MaxBackstep is the largest such step.
	Backwards   int64
	MaxBackstep time.Duration
	// Bytes is the size of the file as read (compressed, if it is), and
	// SHA256 its digest: both cover the whole file once Next has returned
	// io.EOF.
	Bytes  int64
	SHA256 [sha256.Size]byte
}

// TraceError is a problem at one line of a trace. Its text is
// "NAME:LINE: what is wrong", on one line, never longer than a few
// hundred bytes whatever the line was.
type TraceError struct {
	Name string
	Line int64 // 0: not about one line
	Msg  string
	Err  error // the cause, when reading failed
}

func (e *TraceError) Error() string {
	if e.Line == 0 {
		return e.Name + ": " + e.Msg
	}
	return e.Name + ":" + strconv.FormatInt(e.Line, 10) + ": " + e.Msg
}

func (e *TraceError) Unwrap() error { return e.Err }

// excerptLen is how much of a line an error quotes.
const excerptLen = 40

// excerpt quotes at most excerptLen bytes of b, Go-escaped, with "..."
// when it was cut: an error never carries a whole line.
func excerpt(b []byte) string {
	if len(b) > excerptLen {
		return strconv.Quote(string(b[:excerptLen])) + "..."
	}
	return strconv.Quote(string(b))
}

// TraceReader reads a trace one record at a time, in bounded memory: one
// line at a time (at most MaxLine bytes), with buffers reused from line to
// line, so reading allocates nothing per record once warm.
//
// Timestamps that go backwards: a record stamped earlier than the one
// before it keeps its place in the trace and takes the earlier record's
// time (the order of commands matters more than a clock step; a system
// clock stepped back, or clients that logged on their own clocks). Each
// is counted, with the largest step, in Stats. A step back of more than
// MaxBackstep (1 s) is an error at that line: two traces concatenated,
// most likely.
type TraceReader struct {
	name   string
	opt    TraceOptions
	format TraceFormat
	closer io.Closer // the file OpenTrace opened
	raw    *hashReader
	gz     *gzip.Reader
	br     *bufio.Reader

	long    []byte   // a line longer than br's buffer
	args    []byte   // the current record's arguments, decoded
	argv    [][]byte // slices of args
	key     []byte   // JSON: the current object key, decoded
	rec     TraceRecord
	clients map[string]string
	stats   TraceStats

	prevT    int64
	prevLine int64
	started  bool
	// script is the line of the last record when it was a script's call
	// (0 if it was not): the script whose effects follow.
	script int64
	err    error // sticky: once a line is wrong the trace is
}

// bufSize is the read buffer: lines up to it are read without copying.
const bufSize = 256 << 10

// NewTraceReader reads a trace from rd; name is how errors call it (the
// file's name). Gzip-compressed input is recognised by its magic bytes.
// Close does not close rd.
func NewTraceReader(rd io.Reader, name string, opt TraceOptions) (*TraceReader, error) {
	if opt.MaxLine <= 0 {
		opt.MaxLine = DefaultMaxTraceLine
	}
	if opt.MaxBackstep == 0 {
		opt.MaxBackstep = DefaultMaxBackstep
	}
	if opt.MaxBlank == 0 {
		opt.MaxBlank = DefaultMaxBlank
	}
	r := &TraceReader{name: name, opt: opt, format: opt.Format, clients: map[string]string{}}
	r.raw = &hashReader{r: rd, h: sha256.New(), done: opt.Done}
	r.br = bufio.NewReaderSize(r.raw, bufSize)
	if magic, _ := r.br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(r.br)
		if err != nil {
			return nil, &TraceError{Name: name, Msg: "gzip: " + err.Error(), Err: err}
		}
		r.gz = gz
		r.stats.Gzip = true
		r.br = bufio.NewReaderSize(gz, bufSize)
	}
	if r.format == TraceAuto {
		// Detect now when the start is at hand, so the caller knows the
		// format before the first record; a start of more blank space than
		// the buffer holds is detected by Next.
		// A read error here is Next's to report, at its line.
		b, _ := r.br.Peek(4096)
		if f, ok, derr := detect(trimSpace(b), 1); ok {
			if derr != nil {
				derr.Name = name
				return nil, derr
			}
			r.format = f
		}
	}
	return r, nil
}

// Format is the trace's format: TraceAuto until it is known.
func (r *TraceReader) Format() TraceFormat { return r.format }

// Name is the name errors give the trace.
func (r *TraceReader) Name() string { return r.name }

// Stats returns the counts so far.
func (r *TraceReader) Stats() TraceStats {
	s := r.stats
	s.Format = r.format
	s.Bytes = r.raw.n
	r.raw.h.Sum(s.SHA256[:0])
	return s
}

// Close releases the reader and closes the file OpenTrace opened.
func (r *TraceReader) Close() error {
	var err error
	if r.gz != nil {
		err = r.gz.Close()
	}
	if r.closer != nil {
		if cerr := r.closer.Close(); err == nil {
			err = cerr
		}
		r.closer = nil
	}
	return err
}

// Next returns the next record, io.EOF after the last. Any other error
// is a *TraceError naming the line, and ends the trace: Next returns it
// again. The record and its Argv are valid until the next call.
func (r *TraceReader) Next() (*TraceRecord, error) {
	if r.err != nil {
		return nil, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
		return nil, err
	}
	return rec, nil
}

func (r *TraceReader) next() (*TraceRecord, error) {
	for {
		if err := r.blankRun(); err != nil {
			return nil, err
		}
		line, complete, err := r.readLine()
		if err != nil {
			return nil, err
		}
		r.stats.Lines++
		if r.stats.Lines%interruptEvery == 0 && r.interrupted() {
			return nil, r.interruptErr()
		}
		if r.stats.Lines == 1 {
			line = trimBOM(line)
		}
		size := int64(len(line))
		if complete {
			size++
		}
		line = trimSpace(line)
		if len(line) == 0 {
			if err := r.blank(size); err != nil {
				return nil, err
			}
			continue
		}
		if r.format == TraceAuto {
			f, _, derr := detect(line, r.stats.Lines)
			if derr != nil {
				derr.Name = r.name
				return nil, derr
			}
			r.format = f
		}
		r.rec = TraceRecord{Line: r.stats.Lines}
		r.argv = r.argv[:0]
		if cap(r.args) < len(line) {
			// Decoded arguments are never longer than their line, so the
			// slices of args stay in one array for the whole line.
			r.args = make([]byte, 0, max(len(line), 2*cap(r.args)))
		}
		r.args = r.args[:0]
		var msg string
		lua := false
		if r.format == TraceMonitor {
			if string(line) == "OK" || string(line) == "+OK" {
				// redis-cli's reply to MONITOR
				if err := r.blank(size); err != nil {
					return nil, err
				}
				continue
			}
			msg, lua = r.parseMonitor(line)
		} else {
			msg = r.parseJSON(line)
		}
		if msg != "" {
			if !complete {
				msg += " (the last line, without a newline: is the file cut short?)"
			}
			return nil, r.lineErr(msg)
		}
		r.rec.Argv = r.argv
		if lua {
			r.rec.Effect, r.rec.ScriptLine = true, r.script
			r.stats.Lua++
		} else {
			r.script = 0
			if IsScriptCall(r.argv) {
				r.script = r.rec.Line
			}
		}
		if err := r.order(); err != nil {
			return nil, err
		}
		r.stats.Records++
		return &r.rec, nil
	}
}

// blank counts a blank line of size bytes and refuses one past MaxBlank.
func (r *TraceReader) blank(size int64) error {
	r.stats.Blank++
	r.stats.BlankBytes += size
	if r.opt.MaxBlank > 0 && r.stats.BlankBytes > r.opt.MaxBlank {
		return r.lineErr("more than " + blankLimit(r.opt.MaxBlank) +
			" of blank lines: a trace has a command on every line (is this a trace?)")
	}
	return nil
}

func blankLimit(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + "MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// blankRun passes over the empty lines ("\n") at the start of what is
// buffered at once, counting each: a file of nothing but newlines costs a
// scan of its bytes, not a line's work for each.
func (r *TraceReader) blankRun() error {
	for {
		b, _ := r.br.Peek(r.br.Buffered())
		n := 0
		for n < len(b) && b[n] == '\n' {
			n++
		}
		if n == 0 {
			return nil
		}
		if r.opt.MaxBlank > 0 && r.stats.BlankBytes+int64(n) > r.opt.MaxBlank {
			n = int(r.opt.MaxBlank-r.stats.BlankBytes) + 1
			r.br.Discard(n)
			r.stats.Lines += int64(n)
			r.stats.Blank += int64(n)
			r.stats.BlankBytes += int64(n)
			return r.lineErr("more than " + blankLimit(r.opt.MaxBlank) +
				" of blank lines: a trace has a command on every line (is this a trace?)")
		}
		r.br.Discard(n)
		r.stats.Lines += int64(n)
		r.stats.Blank += int64(n)
		r.stats.BlankBytes += int64(n)
		if r.interrupted() {
			return r.interruptErr()
		}
		if n < len(b) {
			return nil
		}
		// The buffer was all newlines: fill it again.
		if _, err := r.br.Peek(1); err != nil {
			return nil // readLine reports the end or the error
		}
	}
}

// interrupted reports whether Done is closed.
func (r *TraceReader) interrupted() bool {
	if r.opt.Done == nil {
		return false
	}
	select {
	case <-r.opt.Done:
		return true
	default:
		return false
	}
}

func (r *TraceReader) interruptErr() *TraceError {
	return &TraceError{Name: r.name, Line: r.stats.Lines, Msg: "interrupted while reading the trace (it was not read to its end)", Err: ErrTraceInterrupted}
}

// order mends a timestamp that went back (see TraceReader).
func (r *TraceReader) order() error {
	t := r.rec.T
	if r.started && t < r.prevT {
		step := uint64(r.prevT) - uint64(t)
		if r.opt.MaxBackstep > 0 && step > uint64(r.opt.MaxBackstep) {
			return r.lineErr(fmt.Sprintf("the timestamp goes back %v from line %d: two traces concatenated? (sort the trace or replay the parts separately)",
				time.Duration(min(step, 1<<63-1)), r.prevLine))
		}
		r.stats.Backwards++
		if d := time.Duration(min(step, 1<<63-1)); d > r.stats.MaxBackstep {
			r.stats.MaxBackstep = d
		}
		r.rec.T = r.prevT
	}
	r.started = true
	r.prevT = r.rec.T
	r.prevLine = r.rec.Line
	return nil
}

func (r *TraceReader) lineErr(msg string) *TraceError {
	return &TraceError{Name: r.name, Line: r.stats.Lines, Msg: msg}
}

// readErr wraps a failed read (a broken gzip stream, a disk error).
func (r *TraceReader) readErr(err error) *TraceError {
	if errors.Is(err, ErrTraceInterrupted) {
		return r.interruptErr()
	}
	msg := err.Error()
	if r.gz != nil && errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "gzip: the compressed file ends too early (cut short?)"
	}
	return &TraceError{Name: r.name, Line: r.stats.Lines + 1, Msg: msg, Err: err}
}

// readLine returns the next line without its "\n", complete false when
// the file ended without one. It refuses a line longer than MaxLine.
func (r *TraceReader) readLine() (line []byte, complete bool, err error) {
	line, err = r.br.ReadSlice('\n')
	switch {
	case err == nil:
		if len(line)-1 > r.opt.MaxLine {
			return nil, false, r.tooLong()
		}
		return line[:len(line)-1], true, nil
	case err == io.EOF:
		if len(line) == 0 {
			return nil, false, io.EOF
		}
		if len(line) > r.opt.MaxLine {
			return nil, false, r.tooLong()
		}
		return line, false, nil
	case err != bufio.ErrBufferFull:
		return nil, false, r.readErr(err)
	}
	r.long = append(r.long[:0], line...)
	for {
		if len(r.long) > r.opt.MaxLine {
			return nil, false, r.tooLong()
		}
		line, err = r.br.ReadSlice('\n')
		r.long = append(r.long, line...)
		switch {
		case err == nil:
			if len(r.long)-1 > r.opt.MaxLine {
				return nil, false, r.tooLong()
			}
			return r.long[:len(r.long)-1], true, nil
		case err == io.EOF:
			if len(r.long) > r.opt.MaxLine {
				return nil, false, r.tooLong()
			}
			return r.long, false, nil
		case err != bufio.ErrBufferFull:
			return nil, false, r.readErr(err)
		}
	}
}

func (r *TraceReader) tooLong() *TraceError {
	e := r.lineErr("line longer than " + strconv.Itoa(r.opt.MaxLine) + " bytes (the most a trace line may have)")
	e.Line++ // the line was not counted yet
	return e
}

// detect tells the format from the start of the first non-empty line; ok
// is false when b is empty.
func detect(b []byte, line int64) (TraceFormat, bool, *TraceError) {
	b = trimBOM(b)
	if len(b) == 0 {
		return TraceAuto, false, nil
	}
	switch c := b[0]; {
	case c == '{':
		return TraceJSON, true, nil
	case c == '+' || c >= '0' && c <= '9' || len(b) >= 2 && c == 'O' && b[1] == 'K':
		return TraceMonitor, true, nil
	}
	return TraceAuto, true, &TraceError{Line: line,
		Msg: "not a trace: want MONITOR output (OK, then `1339518083.107412 [0 127.0.0.1:60866] \"SET\" ...`) or JSON lines ({\"t\": ..., \"argv\": [...]}), got " + excerpt(b)}
}

// trimSpace trims ASCII blanks, "\r" included, at both ends.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isBlank(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isBlank(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// trimBOM drops a UTF-8 byte order mark, which some editors write.
func trimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
		return b[3:]
	}
	return b
}

// intern returns b as a string, without allocating when it was seen
// recently: a trace has few clients and many commands.
func (r *TraceReader) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := r.clients[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(b) <= maxInternedLen {
		if len(r.clients) >= maxInterned {
			clear(r.clients)
		}
		r.clients[s] = s
	}
	return s
}

// hashReader counts and hashes the bytes read through it: the file's
// size and digest, as it is on disk. Once done is closed its reads fail.
type hashReader struct {
	r    io.Reader
	h    hash.Hash
	n    int64
	done <-chan struct{}
}

func (h *hashReader) Read(p []byte) (int, error) {
	if h.done != nil {
		select {
		case <-h.done:
			return 0, ErrTraceInterrupted
		default:
		}
	}
	n, err := h.r.Read(p)
	if n > 0 {
		h.h.Write(p[:n])
		h.n += int64(n)
	}
	return n, err
}
