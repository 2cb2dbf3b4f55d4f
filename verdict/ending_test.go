package verdict

import (
	"errors"
	"testing"
)

// TestEndingOrder: an interruption decides before an error, an error
// before the outcomes, and the worst outcome (Worse's rank) decides among
// them; a test that passed leaves no line.
func TestEndingOrder(t *testing.T) {
	var e Ending
	if e.Code() != ExitPass || e.Outcome() != Pass {
		t.Fatalf("the zero ending: exit %d, %s", e.Code(), e.Outcome())
	}
	if l := e.Judged("GET", Judgement{Outcome: Pass}); l != "" {
		t.Fatalf("a pass said %q", l)
	}
	if l := e.Judged("SET", Judgement{Outcome: Fail, Reason: "p99 3 ms > 2 ms"}); l != "SET: fail: p99 3 ms > 2 ms" {
		t.Fatalf("fail line %q", l)
	}
	if e.Code() != ExitFail {
		t.Fatalf("after a fail: exit %d", e.Code())
	}
	if l := e.Judged("INCR", Judgement{Outcome: Inconclusive, Reason: "send lag p99 5 ms"}); l != "INCR: inconclusive: send lag p99 5 ms" {
		t.Fatalf("inconclusive line %q", l)
	}
	e.Judged("PING", Judgement{Outcome: Fail})
	if e.Code() != ExitInconclusive || e.Outcome() != Inconclusive {
		t.Fatalf("a fail after an inconclusive: exit %d, %s", e.Code(), e.Outcome())
	}
	if l := e.Judged("LPUSH", Judgement{Outcome: Error, Reason: "connection refused"}); l != "LPUSH: error: target lost: connection refused" {
		t.Fatalf("error line %q", l)
	}
	if e.Code() != ExitError {
		t.Fatalf("after a lost target: exit %d", e.Code())
	}

	stopped := Ending{Err: errors.New("dial: refused")}
	stopped.Add(Fail)
	if stopped.Code() != ExitError || stopped.Outcome() != Fail {
		t.Fatalf("an error with a fail: exit %d, %s", stopped.Code(), stopped.Outcome())
	}
	stopped.Interrupted = true
	if stopped.Code() != ExitInterrupted {
		t.Fatalf("interrupted with an error: exit %d", stopped.Code())
	}
	quiet := Ending{Interrupted: true}
	quiet.Add(Pass)
	if quiet.Code() != ExitInterrupted {
		t.Fatalf("interrupted after a pass: exit %d", quiet.Code())
	}
}
