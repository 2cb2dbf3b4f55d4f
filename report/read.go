package report

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/pacer-load/pacer/internal/bytesize"
	userinput "github.com/pacer-load/pacer/internal/input"
	"github.com/pacer-load/pacer/internal/usage"
)

// ReadDocument decodes a pacer.result/v1 document (what --json writes) and
// checks its schema.
func ReadDocument(r io.Reader) (*Document, error) {
	var d Document
	dec := json.NewDecoder(r)
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("not a pacer result: %w", err)
	}
	if d.Schema != Schema {
		return nil, fmt.Errorf("not a pacer result: schema %q, want %q", d.Schema, Schema)
	}
	return &d, nil
}

// MaxDocumentSize bounds a result document ReadInputs reads: an hour of
// one-second intervals is a few MB.
const MaxDocumentSize = 256 << 20

// ReadInputs reads and checks the documents of paths (pacer report and
// pacer merge); "-" is stdin, which may be given once. Documents are
// labelled by their files' base names, or by their paths when two share
// one. Its errors are usage errors that name the path. A cancelled ctx
// (the first Ctrl-C) ends a read that waits, of a FIFO or of stdin, with
// internal/input's ErrInterrupted.
func ReadInputs(ctx context.Context, paths []string, stdin io.Reader) ([]Input, error) {
	base := map[string]int{}
	for _, p := range paths {
		base[filepath.Base(p)]++
	}
	stdinRead := false
	var out []Input
	for _, p := range paths {
		var data []byte
		var err error
		label := filepath.Base(p)
		if base[label] > 1 {
			label = p
		}
		switch {
		case p == StdoutPath && stdinRead:
			return nil, usage.Errorf("- (stdin) given twice")
		case p == StdoutPath:
			stdinRead, label = true, "stdin"
			data, err = readLimited(userinput.Reader(ctx, stdin))
		default:
			var f *userinput.File
			if f, err = userinput.Open(ctx, p); err == nil {
				data, err = readLimited(f)
				f.Close()
			}
		}
		if err != nil {
			return nil, usage.Errorf("%s: %v", p, err)
		}
		in, err := ReadInput(label, data)
		if err != nil {
			return nil, usage.Errorf("%s: %v", p, err)
		}
		out = append(out, in)
	}
	return out, nil
}

// readLimited reads a result document of at most MaxDocumentSize bytes.
// What does not begin as a JSON object (after white space) is refused
// after its first bytes, so /dev/zero or a binary file costs nothing.
func readLimited(r io.Reader) ([]byte, error) {
	br := bufio.NewReader(r)
	for n := 0; ; n++ {
		c, err := br.ReadByte()
		if err == io.EOF {
			return nil, errors.New("empty: not a result document")
		}
		if err != nil {
			return nil, err
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') && n < MaxDocumentSize {
			continue
		}
		if c != '{' {
			return nil, errors.New("not a result document (a JSON object written by --json)")
		}
		br.UnreadByte()
		break
	}
	b, err := io.ReadAll(io.LimitReader(br, MaxDocumentSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxDocumentSize {
		return nil, fmt.Errorf("larger than %s: not a result document", bytesize.Format(MaxDocumentSize))
	}
	return b, nil
}
