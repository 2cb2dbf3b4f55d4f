package bench

import (
	"io"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
	"github.com/pacer-load/pacer/scenarios"
)

// TestReadLastArgIsBounded: -x reads stdin through a limit, so < /dev/zero
// ends with a usage error instead of gigabytes.
func TestReadLastArgIsBounded(t *testing.T) {
	if scenarios.MaxValueSize != 512<<20 {
		t.Fatal("values are capped at 512 MiB")
	}
	s, err := readLimit(strings.NewReader("hello"), 10, "")
	if err != nil || s != "hello" {
		t.Fatalf("%q %v", s, err)
	}
	_, err = readLimit(zeros{}, 1<<20, "")
	if !usage.Is(err) || !strings.Contains(usagetest.CLI(err), "-x") {
		t.Fatalf("endless stdin: %v (usage %v)", err, usage.Is(err))
	}
}

// TestReadLastArgStopsAtTheInFlightBudget: bench -x < /dev/zero read 512 MiB
// (1.2 GB resident, bench/bounds) although -c 50 copies of more than
// 1 GiB / 50 are refused anyway: the read stops at what -c × -P may hold.
func TestReadLastArgStopsAtTheInFlightBudget(t *testing.T) {
	const budget = 1 << 30
	r := &countingZeros{}
	_, err := ReadLastArg(r, 50, 1, budget)
	if !usage.Is(err) || !strings.Contains(usagetest.CLI(err), "-c 50 × -P 1") {
		t.Fatalf("-c 50: %v (usage %v)", err, usage.Is(err))
	}
	if want := int64(budget/50) + 1; r.n > want+32<<10 {
		t.Fatalf("-c 50: read %d bytes of stdin, want about %d", r.n, want)
	}
	r = &countingZeros{}
	if _, err := ReadLastArg(io.LimitReader(r, 1000), 50, 16, budget); err != nil {
		t.Fatalf("a small value: %v", err)
	}
}

type countingZeros struct{ n int64 }

func (c *countingZeros) Read(p []byte) (int, error) {
	clear(p)
	c.n += int64(len(p))
	return len(p), nil
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
