package clock

import (
	"runtime"
	"testing"
)

// Each pacing loop holds one more P while it runs, and GOMAXPROCS comes
// back to what it was when the last one ends, in whatever order.
func TestHoldP(t *testing.T) {
	base := runtime.GOMAXPROCS(0)
	a := HoldP()
	if got := runtime.GOMAXPROCS(0); got != base+1 {
		t.Fatalf("one loop: GOMAXPROCS %d, want %d", got, base+1)
	}
	b := HoldP()
	if got := runtime.GOMAXPROCS(0); got != base+2 {
		t.Fatalf("two loops: GOMAXPROCS %d, want %d", got, base+2)
	}
	a()
	a() // once only
	if got := runtime.GOMAXPROCS(0); got != base+1 {
		t.Fatalf("one left: GOMAXPROCS %d, want %d", got, base+1)
	}
	b()
	if got := runtime.GOMAXPROCS(0); got != base {
		t.Fatalf("none left: GOMAXPROCS %d, want %d", got, base)
	}
}
