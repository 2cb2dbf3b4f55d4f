package secret

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// AskPrompt is redis-cli's --askpass prompt.
const AskPrompt = "Please input password: "

// maxPasswordLen bounds the line --askpass reads from a pipe.
const maxPasswordLen = 4096

// AskPassword reads --askpass's password: from the terminal without echo
// (the prompt on prompt) when in is one, else the first line of in, read
// byte by byte so that nothing after it is consumed (bench -x reads the
// rest). A trailing \r\n or \n is dropped; an empty password is an error.
// A nil in is os.Stdin.
func AskPassword(in io.Reader, prompt io.Writer) (string, error) {
	if in == nil {
		in = os.Stdin
	}
	var pw []byte
	if f, ok := in.(interface{ Fd() uintptr }); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(prompt, AskPrompt)
		var err error
		pw, err = term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return "", fmt.Errorf("read the password from the terminal: %w", err)
		}
	} else {
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
