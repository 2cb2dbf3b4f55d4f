package rxstamp

import (
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/pacer-load/pacer/internal/clock"
)

// TestPassedDescriptorsAreClosed: descriptors an AF_UNIX peer passes do
// not stay open in the reading process.
func TestPassedDescriptorsAreClosed(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	f := os.NewFile(uintptr(fds[1]), "pair")
	nc, err := net.FileConn(f) // a dup of fds[1]
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	r := New(nc, clock.Now)
	supported(t, r)
	open := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	before := open()
	rights := syscall.UnixRights(0, 1, 2)
	if err := syscall.Sendmsg(fds[0], []byte("+OK\r\n"), rights, nil, 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "+OK\r\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if after := open(); after != before {
		t.Fatalf("%d descriptors open before the read, %d after", before, after)
	}
}
