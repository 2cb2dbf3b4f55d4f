package peers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	userinput "github.com/pacer-load/pacer/internal/input"
	"github.com/pacer-load/pacer/report"

	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/internal/usage"
)

// maxInputTotal bounds what ReadInputs reads in all (a variable for
// tests).
var maxInputTotal int64 = 2 * report.MaxDocumentSize

// ReadInputs reads and checks the documents of paths (pacer report and
// pacer merge); "-" is stdin, which may be given once. Documents are
// labelled by their files' base names, or by their paths when two share
// one. Its errors are usage errors that name the path. A cancelled ctx
// (the first Ctrl-C) ends a read that waits, of a FIFO or of stdin, with
// internal/input's ErrInterrupted.
func ReadInputs(ctx context.Context, paths []string, stdin io.Reader) ([]report.Input, error) {
	base := map[string]int{}
	for _, p := range paths {
		base[filepath.Base(p)]++
	}
	stdinRead := false
	var out []report.Input
	left := maxInputTotal
	for _, p := range paths {
		var data []byte
		var memtier *streamed
		var err error
		label := filepath.Base(p)
		if base[label] > 1 {
			label = p
		}
		switch {
		case p == report.StdoutPath && stdinRead:
			return nil, usage.Errorf("- (stdin) given twice")
		case p == report.StdoutPath:
			stdinRead, label = true, "stdin"
			data, memtier, err = readLimited(label, userinput.Reader(ctx, stdin), min(report.MaxDocumentSize, left))
		default:
			var f *userinput.File
			if f, err = userinput.Open(ctx, p); err == nil {
				data, memtier, err = readLimited(label, f, min(report.MaxDocumentSize, left))
				f.Close()
			}
		}
		if err != nil && left < report.MaxDocumentSize {
			err = fmt.Errorf("%w (the files given hold more than %s in all)", err, bytesize.Format(maxInputTotal))
		}
		if err != nil {
			return nil, usage.Errorf("%s: %w", p, err)
		}
		if memtier != nil { // read as it streamed in
			left -= memtier.read
			if memtier.err != nil {
				return nil, usage.Errorf("%s: %w", p, memtier.err)
			}
			out = append(out, memtier.in)
			continue
		}
		left -= int64(len(data))
		in, err := ReadInput(label, data)
		if err != nil {
			return nil, usage.Errorf("%s: %w", p, err)
		}
		out = append(out, in)
	}
	return out, nil
}

// streamed is a document read as it streamed in (memtier's JSON): what
// it gave, its error, and the bytes it took.
type streamed struct {
	in   report.Input
	err  error
	read int64
}

// readLimited reads a result document of at most limit bytes. What does
// not begin as a JSON object (after white space) is refused after its
// first bytes, so /dev/zero or a binary file costs nothing. A
// memtier_benchmark JSON, told by its first MB, is read as it streams in
// (label names it), never held whole: streamed is then set, data nil.
func readLimited(label string, r io.Reader, limit int64) (data []byte, memtier *streamed, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 0; ; n++ {
		c, err := br.ReadByte()
		if err == io.EOF {
			return nil, nil, errors.New("empty: not a result document")
		}
		if err != nil {
			return nil, nil, err
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') && int64(n) < limit {
			continue
		}
		if c != '{' && c != '"' { // a JSON object, or redis-benchmark --csv
			return nil, nil, usage.Option("", "not a result document (a JSON object written by {json}, or redis-benchmark --csv)")
		}
		br.UnreadByte()
		break
	}
	if head, _ := br.Peek(1 << 20); isMemtierJSON(head) {
		cr := &countingReader{r: io.LimitReader(br, limit+1)}
		in, err := readMemtier(label, cr)
		if cr.n > limit {
			err = fmt.Errorf("larger than %s: not a result document", bytesize.Format(limit))
		}
		return nil, &streamed{in: in, err: err, read: cr.n}, nil
	}
	// A file's size sizes the buffer once: io.ReadAll's doublings would
	// leave as much again in garbage, for a file that may be hundreds of MB.
	var buf bytes.Buffer
	if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			buf.Grow(int(min(fi.Size(), limit+1)) + bytes.MinRead)
		}
	}
	if _, err := buf.ReadFrom(io.LimitReader(br, limit+1)); err != nil {
		return nil, nil, err
	}
	b := buf.Bytes()
	if int64(len(b)) > limit {
		return nil, nil, fmt.Errorf("larger than %s: not a result document", bytesize.Format(limit))
	}
	return b, nil, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ReadInput reads data as the result of one of the tools pacer is
// compared with (redis-benchmark --csv, memtier_benchmark
// --json-out-file), as closed-loop tests with the figures they have (see
// foreign.go), or else as a pacer.result/v1 document (report.ReadInput).
func ReadInput(label string, data []byte) (report.Input, error) {
	if in, ok, err := readForeign(label, data); ok {
		return in, err
	}
	return report.ReadInput(label, data)
}
