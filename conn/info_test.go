package conn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/hostile"
)

// TestDoAllPipelines: the commands go in one write, each gets its reply,
// and an error reply to one does not stop the others.
func TestDoAllPipelines(t *testing.T) {
	srv := hostile.Start(t, hostile.Serve(func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "CONFIG":
			return "-ERR unknown command 'CONFIG'\x1b[2J\r\n"
		case "INFO":
			return "$17\r\n# Server\r\nx:1\r\nab\r\n"
		}
		return "*2\r\n$4\r\nsave\r\n$0\r\n\r\n"
	}))
	o := Options{Network: "tcp", Addr: srv.Addr, SkipProbe: true}
	answers, err := DoAll(context.Background(), o, []string{"INFO", "server"}, []string{"CONFIG", "GET", "save"}, []string{"X"})
	if err != nil || len(answers) != 3 {
		t.Fatalf("%d answers, %v", len(answers), err)
	}
	if answers[0].Err != nil || answers[0].Value.Str != "# Server\r\nx:1\r\nab" {
		t.Fatalf("INFO: %+v", answers[0])
	}
	var se *ServerError
	if !errors.As(answers[1].Err, &se) || strings.Contains(se.Msg, "\x1b") || !strings.Contains(se.Msg, "unknown command 'CONFIG'") {
		t.Fatalf("CONFIG: %+v (escape bytes must not pass)", answers[1])
	}
	if answers[2].Err != nil || len(answers[2].Value.Elems) != 2 {
		t.Fatalf("X: %+v", answers[2])
	}
	if srv.Accepted() != 1 {
		t.Fatalf("%d connections, want one", srv.Accepted())
	}
}

// TestDoAllFailures: a server that closes after one reply, one that never
// answers (ctx ends the wait), and one that cannot be reached.
func TestDoAllFailures(t *testing.T) {
	once := hostile.Start(t, func(c *hostile.Client) {
		if _, err := c.ReadCommand(); err == nil {
			_ = c.Write("+OK\r\n")
		}
	})
	o := Options{Network: "tcp", Addr: once.Addr, SkipProbe: true}
	answers, err := DoAll(context.Background(), o, []string{"A"}, []string{"B"})
	if err == nil || len(answers) != 1 || !strings.HasPrefix(err.Error(), "B: ") {
		t.Fatalf("closed after one: %d answers, %v", len(answers), err)
	}

	silent := hostile.Start(t, hostile.Silent)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	o.Addr = silent.Addr
	answers, err = DoAll(ctx, o, []string{"INFO"})
	if !errors.Is(err, context.DeadlineExceeded) || len(answers) != 0 {
		t.Fatalf("silent: %d answers, %v", len(answers), err)
	}

	o.Addr = "127.0.0.1:1"
	if _, err := DoAll(context.Background(), o, []string{"INFO"}); err == nil {
		t.Fatal("no server, no error")
	}
}
