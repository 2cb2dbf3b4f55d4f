package conn

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/testrun"
)

// repeatReader yields head, then body n times, then tail, without holding
// them all: a reply of millions of elements costs the test nothing.
type repeatReader struct {
	head, body, tail string
	n                int
	pending          string
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for r.pending == "" {
		switch {
		case r.head != "":
			r.pending, r.head = r.head, ""
		case r.n > 0:
			k := min(r.n, max(1, 64<<10/len(r.body)))
			r.pending, r.n = strings.Repeat(r.body, k), r.n-k
		case r.tail != "":
			r.pending, r.tail = r.tail, ""
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// TestReadValueCountsElements: every element of a reply counts against
// ReadValue's budget, not only the bytes of its strings. A claim of 64M
// nulls is refused at its header; 64M nulls sent as 1,024 arrays of 65,536
// each are refused once the budget is spent, with memory bounded (they took
// 1.3 GB when only bulk bytes counted).
func TestReadValueCountsElements(t *testing.T) {
	const total = 64 << 20
	for _, c := range []struct {
		name string
		r    *repeatReader
	}{
		{"one array", &repeatReader{head: "*" + strconv.Itoa(total) + "\r\n", body: "$-1\r\n", n: total}},
		{"nested arrays", &repeatReader{head: "*1024\r\n", body: "*65536\r\n" + strings.Repeat("$-1\r\n", 65536), n: 1024}},
		{"empty arrays", &repeatReader{head: "*1024\r\n", body: "*65536\r\n" + strings.Repeat("*0\r\n", 65536), n: 1024}},
		{"a map of nulls", &repeatReader{head: "%" + strconv.Itoa(total/2) + "\r\n", body: "_\r\n", n: total}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			alloc := testrun.Allocated(func() { _, err = NewReader(c.r, func() int64 { return 0 }).ReadValue() })
			if err == nil || !strings.Contains(err.Error(), "too large to keep") {
				t.Fatalf("err %v", err)
			}
			t.Logf("%v; %d MB allocated", err, alloc>>20)
			if alloc > 150<<20 {
				t.Errorf("%d MB allocated for a refused reply", alloc>>20)
			}
		})
	}
	// A reply of the size of a large cluster's CLUSTER SHARDS is kept.
	r := &repeatReader{head: "*1000\r\n", body: "*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:1\r\n$5\r\nnodes\r\n*3\r\n" +
		strings.Repeat("*4\r\n$2\r\nid\r\n$40\r\n"+strings.Repeat("a", 40)+"\r\n$4\r\nport\r\n:7000\r\n", 3), n: 1000}
	v, err := NewReader(r, func() int64 { return 0 }).ReadValue()
	if err != nil || len(v.Elems) != 1000 {
		t.Fatalf("%d elements, %v", len(v.Elems), err)
	}
}
