package embedded

import (
	"bufio"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/certs"
)

func TestTLS(t *testing.T) {
	server, client, err := certs.Loopback()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Start(Config{TLS: &tls.Config{}}); err == nil {
		t.Fatal("TLS without a certificate started")
	}
	s, err := Start(Config{TLS: server})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := tls.Dial("tcp", s.Addr(), client)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	sess := &session{t: t, c: c, r: bufio.NewReader(c)}
	if got := sess.do("SET", "k", "v") + sess.do("GET", "k"); got != "+OK\r\n$1\r\nv\r\n" {
		t.Fatalf("replies %q", got)
	}
	// A plain client gets nothing it could take for RESP, and Close
	// returns with it still connected.
	plain, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	plain.Write([]byte(encode("PING")))
}

func TestPassword(t *testing.T) {
	for _, user := range []string{"", "alice"} {
		s, err := Start(Config{User: user, Password: "pw"})
		if err != nil {
			t.Fatal(err)
		}
		c := dial(t, s)
		name := user
		if name == "" {
			name = "default"
		}
		steps := []struct {
			args []string
			want string
		}{
			{[]string{"GET", "k"}, "-NOAUTH Authentication required.\r\n"},
			{[]string{"HELLO", "3"}, "-NOAUTH HELLO must be called"},
			{[]string{"AUTH", name, "wrong"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
			{[]string{"AUTH", "nobody", "pw"}, "-WRONGPASS"},
			{[]string{"AUTH", name, "pw"}, "+OK\r\n"},
			{[]string{"GET", "k"}, "$-1\r\n"},
		}
		if user == "" {
			steps = append(steps, struct {
				args []string
				want string
			}{[]string{"AUTH", "pw"}, "+OK\r\n"})
		}
		for _, st := range steps {
			if got := c.do(st.args...); !strings.HasPrefix(got, st.want) {
				t.Errorf("user %q: %v = %q, want %q", user, st.args, got, st.want)
			}
		}
		// HELLO 3 AUTH on a fresh connection.
		c2 := dial(t, s)
		if got := c2.do("HELLO", "3", "AUTH", name, "pw"); !strings.HasPrefix(got, "%7") {
			t.Errorf("HELLO 3 AUTH: %q", got)
		}
		s.Close()
	}
}
