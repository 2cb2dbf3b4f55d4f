package scheduler_test

import (
	"bytes"
	"testing"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/scheduler"
)

func TestFixedSendsTheSameCommand(t *testing.T) {
	want := conn.AppendCommand(nil, "GET", "key")
	var cmds scheduler.Commands = scheduler.Fixed(want)
	for i := range 3 {
		cmd, kind := cmds.Next()
		if !bytes.Equal(cmd, want) || kind != 0 {
			t.Fatalf("request %d: %q kind %d, want %q kind 0", i, cmd, kind, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { cmds.Next() }); n != 0 {
		t.Errorf("Next allocates %v times per call, want 0", n)
	}
}
