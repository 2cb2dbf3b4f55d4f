package redistest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A Capture is `redis-cli monitor` recording what a server executes into
// a file: the format `pacer replay` reads.
type Capture struct {
	// Path is the file the capture is written to.
	Path   string
	cmd    *exec.Cmd
	file   *os.File
	cancel context.CancelFunc
}

// Monitor starts redis-cli monitor against s, writing to a file in the
// test's temporary directory, and returns once the server has
// acknowledged it (the capture's first line, OK): every command s
// executes from then on is in it. The capture ends with Stop, or with the
// test.
func (s *Server) Monitor(t testing.TB) *Capture {
	t.Helper()
	cli := Binary(t, "redis-cli")
	path := filepath.Join(t.TempDir(), "monitor.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	c := &Capture{Path: path, file: f, cancel: cancel,
		cmd: exec.CommandContext(ctx, cli, "-h", "127.0.0.1", "-p", s.PortString(), "monitor")}
	c.cmd.Stdout = f
	if err := c.cmd.Start(); err != nil {
		cancel()
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	c.WaitFor(t, "OK\n")
	return c
}

// WaitFor waits until the capture holds text (a command's argument, say),
// failing t after 10 s.
func (c *Capture) WaitFor(t testing.TB, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(c.Path); bytes.Contains(b, []byte(text)) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, _ := os.ReadFile(c.Path)
	t.Fatalf("%s never showed %q: %q", c.Path, text, b)
}

// Stop ends the capture; its file is complete when Stop returns. Calling
// it again does nothing.
func (c *Capture) Stop() {
	if c.cancel == nil {
		return
	}
	c.cancel()
	c.cmd.Wait()
	c.file.Close()
	c.cancel = nil
}
