package conn_test

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/embedded"
)

// AppendCommand encodes a command as RESP, with no formatting library and
// no allocation beyond dst's growth.
func ExampleAppendCommand() {
	fmt.Printf("%q\n", conn.AppendCommand(nil, "SET", "key", "value"))
	// Output: "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n"
}

// Do is for the control plane: one command on a connection of its own,
// its reply built as a Value.
func ExampleDo() {
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	o := conn.Options{Addr: srv.Addr()}
	ctx := context.Background()
	if _, err := conn.Do(ctx, o, "SET", "greeting", "hello"); err != nil {
		log.Fatal(err)
	}
	v, err := conn.Do(ctx, o, "GET", "greeting")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.Str)
	_, err = conn.Do(ctx, o, "INCR", "greeting")
	fmt.Println(err)
	// Output:
	// hello
	// INCR: ERR value is not an integer or out of range
}

// replies is a Handler: the connection's reader goroutine hands it every
// reply, in send order, with the entry it answers. It runs on the hot
// path, so it only keeps what it needs: here each command's kind and
// error code.
type replies struct {
	wg    sync.WaitGroup
	kinds []uint32
	codes []string
}

func (h *replies) Reply(e *conn.Entry, r conn.Reply, t conn.Times) {
	// t.Arrival − e.Intended is the response time, t.Arrival − e.Written
	// the service time.
	code := ""
	if r.Err {
		code = string(r.Code())
	}
	h.kinds, h.codes = append(h.kinds, e.Kind), append(h.codes, code)
	h.wg.Done()
}

// A Conn pipelines: commands are queued with their intended times, written
// together by Flush, and their replies reach a Handler on the reader
// goroutine. The clock is the caller's.
func ExampleConn() {
	srv := embedded.MustStart(embedded.Config{})
	defer srv.Close()
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) } // monotonic ns
	c, err := conn.Dial(context.Background(), conn.Options{Addr: srv.Addr(), Now: now})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	h := &replies{}
	c.Start(h)

	cmds := [][]string{{"SET", "n", "1"}, {"INCR", "n"}, {"LPUSH", "n", "x"}}
	h.wg.Add(len(cmds))
	t := now()
	for kind, args := range cmds {
		c.Queue(conn.AppendCommand(nil, args...), t, uint32(kind)) // an empty FIFO has room
	}
	if err := c.Flush(now()); err != nil { // one write for the three
		log.Fatal(err)
	}
	h.wg.Wait()
	for i, kind := range h.kinds {
		fmt.Printf("%s: %q\n", cmds[kind][0], h.codes[i])
	}
	// Output:
	// SET: ""
	// INCR: ""
	// LPUSH: "WRONGTYPE"
}
