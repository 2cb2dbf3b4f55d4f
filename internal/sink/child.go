package sink

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// A sink in a process of its own, so that nothing of the process it
// referees (its garbage collections, its goroutines) delays the sink. A
// program that may run as one calls RunChild first thing when IsChild (a
// test binary does it in TestMain); StartChild runs it and takes back the
// records of its indexed commands (indexedCommand). The instants are the
// monotonic clock of both processes.

const (
	childEnv      = "PACER_SINK_CHILD"
	childStallEnv = "PACER_SINK_STALL" // "d,period", Go durations
)

// IsChild reports whether this process was started by StartChild.
func IsChild() bool { return os.Getenv(childEnv) != "" }

// RunChild serves as a sink child: it writes the sink's address on
// stdout, serves (stalling on the schedule it was given) until stdin is
// closed, then writes one line per indexed command, "index kernel read
// replied conn", and returns the process's exit code.
func RunChild() int {
	s, err := Start(Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if v := os.Getenv(childStallEnv); v != "" {
		ds, ps, _ := strings.Cut(v, ",")
		d, err1 := time.ParseDuration(ds)
		p, err2 := time.ParseDuration(ps)
		if err1 != nil || err2 != nil || d <= 0 || p <= 0 {
			fmt.Fprintf(os.Stderr, "sink: bad %s %q\n", childStallEnv, v)
			return 1
		}
		defer s.StallEvery(d, p)()
	}
	fmt.Println(s.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Close()
	w := bufio.NewWriter(os.Stdout)
	for _, r := range s.Records() {
		if i, ok := r.Index(); ok {
			fmt.Fprintf(w, "%d %d %d %d %d\n", i, r.Kernel, r.Read, r.Replied, r.Conn)
		}
	}
	if err := w.Flush(); err != nil {
		return 1
	}
	return 0
}

// Child is a running sink child.
type Child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	addr  string
}

// StartChild runs exe (with args) as a sink child, stalling d every
// period (0: never), and returns once it listens.
func StartChild(exe string, args []string, d, period time.Duration) (*Child, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	if d > 0 && period > 0 {
		cmd.Env = append(cmd.Env, childStallEnv+"="+d.String()+","+period.String())
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Child{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	line, err := c.out.ReadString('\n')
	if err != nil {
		c.stdin.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("sink child: %w", err)
	}
	c.addr = strings.TrimSpace(line)
	return c, nil
}

// Addr returns the child sink's host:port.
func (c *Child) Addr() string { return c.addr }

// Close stops the child and returns the records of its indexed commands.
func (c *Child) Close() ([]Record, error) {
	c.stdin.Close()
	var out []Record
	for {
		line, err := c.out.ReadString('\n')
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		f := strings.Fields(line)
		if len(f) != 5 {
			return nil, fmt.Errorf("sink child: line %q", line)
		}
		var v [5]int64
		for k := range v {
			if v[k], err = strconv.ParseInt(f[k], 10, 64); err != nil {
				return nil, fmt.Errorf("sink child: line %q", line)
			}
		}
		out = append(out, Record{Conn: int(v[4]), Argv: [][]byte{[]byte("ECHO"), []byte(fmt.Sprintf("%012d", v[0]))},
			Kernel: v[1], Read: v[2], Replied: v[3]})
	}
	return out, c.cmd.Wait()
}
