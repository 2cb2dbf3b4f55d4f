package conn

import (
	"context"
	"net"
	"testing"
	"time"
)

// pongServer answers every command of the fixed size cmdLen with +PONG.
func pongServer(cmdLen int) func(c net.Conn) {
	return func(c net.Conn) {
		buf := make([]byte, 64<<10)
		out := make([]byte, 0, 64<<10)
		carry := 0
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			carry += n
			out = out[:0]
			for ; carry >= cmdLen; carry -= cmdLen {
				out = append(out, "+PONG\r\n"...)
			}
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	}
}

// BenchmarkQueueFlush queues and flushes batches of 8 PINGs on a loopback
// connection whose replies the reader goroutine consumes: the writer's
// whole path, one op per command.
func BenchmarkQueueFlush(b *testing.B) {
	cmd := AppendCommand(nil, "PING")
	addr := benchLoopback(b, pongServer(len(cmd)))
	c, err := Dial(context.Background(), Options{Addr: addr, Now: func() int64 { return 1 }, SkipProbe: true})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	c.Start(&countReplies{})
	const batch = 8
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		for c.Free() < batch {
			time.Sleep(time.Microsecond)
		}
		for range batch {
			c.Queue(cmd, 0, 0)
		}
		if err := c.Flush(1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRing runs the FIFO without I/O: queue a command, account for
// its write, pop it as the reader would. One op per command.
func BenchmarkRing(b *testing.B) {
	a, p := net.Pipe()
	defer p.Close()
	c := New(a, Options{})
	defer c.Close()
	cmd := AppendCommand(nil, "PING")
	const batch = 64
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		for range batch {
			c.Queue(cmd, int64(i), 0)
		}
		c.advance(batch*len(cmd), int64(i))
		for range batch {
			h := c.ring.head.Load()
			if e := c.ring.slot(h); e.Written != int64(i) {
				b.Fatal("bad entry")
			}
			c.ring.head.Store(h + 1)
		}
	}
}

func benchLoopback(b *testing.B, handle func(c net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		handle(c)
		c.Close()
	}()
	b.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}
