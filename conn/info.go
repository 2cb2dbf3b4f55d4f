package conn

import (
	"context"
	"errors"
	"fmt"
)

// Answer is one command's reply in DoAll: its value, or Err, a
// *ServerError when the server answered with an error.
type Answer struct {
	Value Value
	Err   error
}

// DoAll opens a connection with o, sends cmds in one write, reads one
// reply per command and closes the connection: for a few control commands
// (INFO, CONFIG GET, LATENCY HISTOGRAM), not for load. An error reply to
// one command does not stop the others. err is a failure to connect, to
// write or to read (ctx done included); answers then holds the replies
// read before it. Like Dial's, its error texts are sanitized, the server's
// error texts included.
func DoAll(ctx context.Context, o Options, cmds ...[]string) (answers []Answer, err error) {
	o = o.withDefaults()
	c, err := Dial(ctx, o)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	// ctx done (cancelled, or its deadline) closes the connection, which
	// ends a blocked write or read.
	stop := context.AfterFunc(ctx, c.Close)
	defer stop()
	var buf []byte
	for _, args := range cmds {
		buf = AppendCommand(buf, args...)
	}
	if err := c.Write(buf); err != nil {
		return nil, o.sanitize(ctxErr(ctx, err))
	}
	for _, args := range cmds {
		v, err := c.rd.ReadValue()
		var se *ServerError
		switch {
		case errors.As(err, &se):
			answers = append(answers, Answer{Value: v, Err: &ServerError{Msg: o.safeText(se.Msg)}})
		case err != nil:
			return answers, o.sanitize(fmt.Errorf("%s: %w", args[0], ctxErr(ctx, err)))
		default:
			answers = append(answers, Answer{Value: v})
		}
	}
	return answers, nil
}

// ctxErr prefers ctx's error to err when ctx is done: a read interrupted by
// the deadline or by cancellation says so rather than "use of closed
// network connection".
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
