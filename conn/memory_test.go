package conn

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/hostile"
	"github.com/pacer-load/pacer/internal/testrun"
)

// TestConnectionCostFollowsUse: a connection with a command or two in
// flight costs what it uses, not its caps. pacer run -c 9000 at 10k/s
// took 3.3 GB resident: each connection made and touched 352 KiB of FIFO
// (the default MaxInflight's worth) and a 64 KiB read buffer up front.
func TestConnectionCostFollowsUse(t *testing.T) {
	srv := hostile.Start(t, hostile.OK)
	const n = 50
	conns := make([]*Conn, 0, n)
	alloc := testrun.Allocated(func() {
		for range n {
			c, err := Dial(context.Background(), Options{Addr: srv.Addr})
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
	})
	for _, c := range conns {
		c.Close()
	}
	per := alloc / n
	t.Logf("%d bytes allocated per connection", per)
	if per > 32<<10 {
		t.Errorf("a connection allocated %d KiB before its first command, want at most 32 KiB", per>>10)
	}
}

// TestReadBufferGrowsAndShrinks: the read buffer starts at a page, grows
// while reads fill it, and halves back once a span of reads uses an eighth
// of it at most; a line longer than it still grows it.
func TestReadBufferGrowsAndShrinks(t *testing.T) {
	burst := strings.Repeat("+OK\r\n", 200_000) // 1 MB in one go
	calm := strings.Repeat("+OK\r\n", 4*shrinkReads*8)
	src := &chunked{data: []byte(burst), max: 1 << 20}
	r := NewReader(src, nil)
	if len(r.buf) != readBufMin {
		t.Fatalf("a new reader's buffer is %d bytes, want %d", len(r.buf), readBufMin)
	}
	for range 200_000 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.buf) != readBufSize {
		t.Errorf("after a burst the buffer is %d bytes, want %d", len(r.buf), readBufSize)
	}
	// Then replies come a few at a time: the buffer goes back to a page.
	src.data, src.max = []byte(calm), 5
	for range 4 * shrinkReads * 8 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.buf) != readBufMin {
		t.Errorf("after calm reads the buffer is %d bytes, want %d", len(r.buf), readBufMin)
	}
	// A line of 100 KB grows it past readBufSize.
	src.data, src.max = []byte("+"+strings.Repeat("x", 100_000)+"\r\n"), 1<<20
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if len(r.buf) < 100_000 {
		t.Errorf("a 100 KB line left a buffer of %d bytes", len(r.buf))
	}
}

// chunked yields data at most max bytes per Read.
type chunked struct {
	data []byte
	max  int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.max)], c.data)
	c.data = c.data[n:]
	return n, nil
}

// TestOutputBufferShrinksAfterABurst: a burst that grew the output buffer
// to MaxBuffer gives the memory back once later flushes hold an eighth of
// it at most; a steady load keeps its buffer.
func TestOutputBufferShrinksAfterABurst(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go io.Copy(io.Discard, b)
	c := New(a, Options{MaxBuffer: 1 << 20})
	defer c.Close()
	cmd := bytes.Repeat([]byte("x"), 1000)
	queue := func(k int) {
		for range k {
			if c.InFlight() == c.ring.capacity() {
				c.ring.head.Store(c.ring.pub.Load()) // answered: free the FIFO
			}
			c.Queue(cmd, 1, 0)
		}
		if err := c.FlushBlocking(1); err != nil {
			t.Fatal(err)
		}
		c.ring.head.Store(c.ring.pub.Load())
	}
	queue(900) // 900 KB at once
	if cap(c.out) < 900_000 {
		t.Fatalf("the burst left a buffer of %d bytes", cap(c.out))
	}
	for range 12 * shrinkFlushes { // a halving per shrinkFlushes
		queue(2)
	}
	if cap(c.out) > 16<<10 {
		t.Errorf("after the burst and %d flushes of 2 KB the buffer holds %d bytes", 12*shrinkFlushes, cap(c.out))
	}
	steady := cap(c.out)
	for range 4 * shrinkFlushes {
		queue(2)
	}
	if cap(c.out) != steady {
		t.Errorf("a steady load changed its buffer from %d to %d bytes", steady, cap(c.out))
	}
}
