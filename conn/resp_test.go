package conn

import "testing"

// TestAppendArgs: a trace's argv (byte slices, empty and binary ones
// included) encodes as its strings would, after what dst holds, without
// allocating when dst has room.
func TestAppendArgs(t *testing.T) {
	argv := [][]byte{[]byte("SET"), []byte("k"), {}, []byte("a\r\nb")}
	want := "x*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n$4\r\na\r\nb\r\n"
	if got := AppendArgs([]byte("x"), argv); string(got) != want {
		t.Fatalf("%q", got)
	}
	if got := AppendCommand([]byte("x"), "SET", "k", "", "a\r\nb"); string(got) != want {
		t.Fatalf("strings: %q", got)
	}
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { buf = AppendArgs(buf[:0], argv) }); n != 0 {
		t.Errorf("%.1f allocations", n)
	}
}
