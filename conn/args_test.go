package conn

import "testing"

func TestArgBounds(t *testing.T) {
	set := AppendCommand(nil, "SET", "key:1", "value")
	for _, c := range []struct {
		cmd  []byte
		pos  int
		want string
		ok   bool
	}{
		{set, 0, "SET", true},
		{set, 1, "key:1", true},
		{set, 2, "value", true},
		{set, 3, "", false},                                 // past the last argument
		{set, -1, "", false},                                // before the first
		{[]byte("PING\r\n"), 1, "", false},                  // inline
		{set[:12], 1, "", false},                            // cut inside the key
		{[]byte("*2\r\n$3\r\nGET\r\n$x\r\n"), 1, "", false}, // bad length
		{[]byte("*99999999999\r\n"), 0, "", false},          // a count of more than ten digits
		{AppendCommand(nil, "GET", ""), 1, "", true},        // empty key
	} {
		from, to, ok := ArgBounds(c.cmd, c.pos)
		if ok != c.ok || ok && string(c.cmd[from:to]) != c.want {
			t.Errorf("ArgBounds(%q, %d) = %d, %d, %v; want %q, %v", c.cmd, c.pos, from, to, ok, c.want, c.ok)
		}
		if a, ok2 := Arg(c.cmd, c.pos); ok2 != ok || ok && string(a) != c.want {
			t.Errorf("Arg(%q, %d) = %q, %v", c.cmd, c.pos, a, ok2)
		}
	}
	if n, ok := ArgCount(set); n != 3 || !ok {
		t.Errorf("ArgCount = %d, %v", n, ok)
	}
	if _, ok := ArgCount([]byte("PING\r\n")); ok {
		t.Error("ArgCount of an inline command")
	}
}

func TestArgAllocatesNothing(t *testing.T) {
	cmd := AppendCommand(nil, "SET", "key:1", "value")
	if n := testing.AllocsPerRun(100, func() { _, _ = Arg(cmd, 2) }); n != 0 {
		t.Fatalf("%v allocations per call", n)
	}
}
