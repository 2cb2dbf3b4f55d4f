package hostile

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func roundTrip(t *testing.T, s *Server, send string, n int) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, send); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(c)
	var b strings.Builder
	for range n {
		line, err := rd.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			break
		}
	}
	return b.String()
}

func TestBehaviours(t *testing.T) {
	get := "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
	for _, c := range []struct {
		name  string
		b     Behaviour
		send  string
		lines int
		want  string
	}{
		{"double", DoubleReply, get, 2, "+OK\r\n+OK\r\n"},
		{"unsolicited", UnsolicitedFirst, get, 2, "+OK\r\n+OK\r\n"},
		{"maxclients", MaxClients, get, 1, MaxClientsReply},
		{"echo auth", EchoAuthError, "*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n", 1, "-WRONGPASS bad credentials secret\r\n"},
		{"push", PushBeforeReply, get, 7, ">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nkey\r\n+OK\r\n"},
		{"inline", OK, "PING\r\n", 1, "+PONG\r\n"},
		{"answer", Answer("-NOAUTH Authentication required.\r\n"), get, 1, "-NOAUTH Authentication required.\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Start(t, c.b)
			if got := roundTrip(t, s, c.send, c.lines); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestDistinctErrorsAndAccounting(t *testing.T) {
	s := Start(t, DistinctErrors())
	got := roundTrip(t, s, "PING\r\nPING\r\n", 2)
	if got != "-E1 distinct error\r\n-E2 distinct error\r\n" {
		t.Fatalf("got %q", got)
	}
	if s.Accepted() != 1 || s.Commands() != 2 {
		t.Fatalf("accepted %d commands %d, want 1 and 2", s.Accepted(), s.Commands())
	}
}

func TestCloseEndsSilentAndNeverRead(t *testing.T) {
	for _, b := range []Behaviour{Silent, NeverRead} {
		s, err := Listen(b)
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for s.Accepted() == 0 {
			time.Sleep(time.Millisecond)
		}
		done := make(chan struct{})
		go func() { s.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			t.Fatal("Close did not return")
		}
	}
}

func TestAcceptCloseCloses(t *testing.T) {
	s := Start(t, AcceptClose)
	c, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read: %v, want EOF", err)
	}
}

// TestListenOnLoopbackOnly: a second loopback host serves; an address off
// loopback is refused before anything listens.
func TestListenOnLoopbackOnly(t *testing.T) {
	s := StartOn(t, "127.0.0.2:0", Answer("+PONG\r\n"))
	if !strings.HasPrefix(s.Addr, "127.0.0.2:") {
		t.Fatalf("listening on %s", s.Addr)
	}
	if got := roundTrip(t, s, "PING\r\n", 1); got != "+PONG\r\n" {
		t.Fatalf("got %q", got)
	}
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "localhost:0", "nonsense"} {
		if s, err := ListenOn(addr, AcceptClose); err == nil {
			s.Close()
			t.Errorf("ListenOn(%q) listened", addr)
		}
	}
}
