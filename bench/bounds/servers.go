package main

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/internal/hostile"
)

// fastServe answers every command with what reply appends, batching the
// replies of a pipelined read into one write: hostile.Serve writes each
// reply on its own, too slow to reach the 100k+ replies a second some
// cases need.
func fastServe(reply func(args [][]byte, out []byte) []byte) hostile.Behaviour {
	return func(c *hostile.Client) {
		rd := bufio.NewReaderSize(c.Conn, 64<<10)
		var out []byte
		for {
			args, err := readCommand(rd)
			if err != nil {
				return
			}
			out = reply(args, out)
			if rd.Buffered() == 0 || len(out) > 64<<10 {
				if _, err := c.Conn.Write(out); err != nil {
					return
				}
				out = out[:0]
			}
		}
	}
}

// afterPing answers the connection check pacer makes on every new
// connection (a PING, with default flags) and then behaves as b: a server
// that never reads or never answers, once the run has started.
func afterPing(b hostile.Behaviour) hostile.Behaviour {
	return func(c *hostile.Client) {
		args, err := c.ReadCommand()
		if err != nil {
			return
		}
		if len(args) == 1 && strings.EqualFold(args[0], "PING") && c.Write("+PONG\r\n") != nil {
			return
		}
		b(c)
	}
}

// maxArg bounds one argument: pacer's commands in these cases are small.
const maxArg = 1 << 20

// readCommand reads a RESP array of bulk strings, or an inline command.
func readCommand(rd *bufio.Reader) ([][]byte, error) {
	line, err := rd.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 2 || line[0] != '*' {
		return [][]byte{append([]byte(nil), line...)}, nil
	}
	n, err := strconv.Atoi(string(line[1 : len(line)-2]))
	if err != nil || n < 0 || n > 1<<16 {
		return nil, errors.New("bad array header")
	}
	args := make([][]byte, 0, n)
	for range n {
		h, err := rd.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if len(h) < 3 || h[0] != '$' {
			return nil, errors.New("want a bulk string")
		}
		size, err := strconv.Atoi(string(h[1 : len(h)-2]))
		if err != nil || size < 0 || size > maxArg {
			return nil, errors.New("bad bulk length")
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(rd, b); err != nil {
			return nil, err
		}
		args = append(args, b[:size])
	}
	return args, nil
}
