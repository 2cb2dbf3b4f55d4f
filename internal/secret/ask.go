package secret

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/pacer-load/pacer/internal/input"
)

// AskPrompt is redis-cli's --askpass prompt.
const AskPrompt = "Please input password: "

// maxPasswordLen bounds the line --askpass reads from a pipe.
const maxPasswordLen = 4096

// AskPassword reads --askpass's password: from the terminal without echo
// (the prompt on prompt) when in is one, else the first line of in, read
// byte by byte so that nothing after it is consumed (bench -x reads the
// rest). A trailing \r\n or \n is dropped; an empty password is an error.
// A nil in is os.Stdin. A cancelled ctx (the first Ctrl-C) ends the wait
// with internal/input's ErrInterrupted, the terminal's echo restored.
func AskPassword(ctx context.Context, in io.Reader, prompt io.Writer) (string, error) {
	return AskPasswordFor(ctx, in, prompt, AskPrompt)
}

// AskPasswordFor is AskPassword with its own prompt (a second password,
// the sentinels'): text is shown on a terminal.
func AskPasswordFor(ctx context.Context, in io.Reader, prompt io.Writer, text string) (string, error) {
	if in == nil {
		in = os.Stdin
	}
	var pw []byte
	if f, ok := in.(interface{ Fd() uintptr }); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(prompt, text)
		var err error
		pw, err = readTerminal(ctx, int(f.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return "", fmt.Errorf("read the password from the terminal: %w", err)
		}
	} else {
		in = input.Reader(ctx, in)
		var b [1]byte
		for {
			n, err := in.Read(b[:])
			if n == 1 {
				if b[0] == '\n' {
					break
				}
				if len(pw) == maxPasswordLen {
					return "", fmt.Errorf("the first line of stdin is longer than %d bytes: not a password", maxPasswordLen)
				}
				pw = append(pw, b[0])
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return "", fmt.Errorf("read the password from stdin: %w", err)
			}
		}
	}
	s := strings.TrimSuffix(string(pw), "\r")
	if s == "" {
		return "", errors.New("no password given (an empty line, or nothing on stdin)")
	}
	return s, nil
}

// readTerminal is term.ReadPassword that a cancelled ctx ends: the read
// goes on in a goroutine, left behind blocked until the process exits,
// and the terminal gets its echo back here, since ReadPassword's own
// restore runs only when its read returns.
func readTerminal(ctx context.Context, fd int) ([]byte, error) {
	state, err := term.GetState(fd)
	if err != nil {
		return nil, err
	}
	type result struct {
		pw  []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		pw, err := term.ReadPassword(fd)
		ch <- result{pw, err}
	}()
	select {
	case r := <-ch:
		return r.pw, r.err
	case <-ctx.Done():
		term.Restore(fd, state)
		return nil, input.ErrInterrupted
	}
}
