package main

import (
	"testing"
	"time"

	"github.com/pacer-load/pacer/scheduler"
)

// The lines watchConnections writes on stderr.
func TestConnectionLines(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{connectionsLine("GET", 1500*time.Millisecond, scheduler.Connections{Open: 48, Of: 50, Lost: 2, Reconnects: 2}, 2),
			"pacer: GET: 2 connections lost by 1.5 s; 48 of 50 open, 2 replaced so far"},
		{connectionsLine("GET", time.Second, scheduler.Connections{Open: 0, Of: 1, Lost: 1}, 1),
			"pacer: GET: connection lost by 1.0 s; 0 of 1 open; requests wait for a reconnect"},
		{joinLine("GET", 3*time.Second, scheduler.NodeJoin{Addr: "127.0.0.1:7004", Open: 2, Of: 2}),
			"pacer: GET: cluster node 127.0.0.1:7004 joined the run by 3.0 s: 2 of 2 connections open"},
		{joinLine("GET", 3*time.Second, scheduler.NodeJoin{Addr: "127.0.0.1:7004", Of: 2, Err: "dial tcp 127.0.0.1:7004: connect: connection refused\n"}),
			"pacer: GET: cluster node 127.0.0.1:7004 joined the run by 3.0 s and could not be reached (dial tcp 127.0.0.1:7004: connect: connection refused); its requests are errors until a redial reaches it"},
		{joinLine("GET", 0, scheduler.NodeJoin{Addr: "127.0.0.1:7004\x1b[2J", Of: 2}),
			"pacer: GET: cluster node 127.0.0.1:7004\\x1b[2J joined the run by 0.0 s and could not be reached (no connection opened); its requests are errors until a redial reaches it"},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}
