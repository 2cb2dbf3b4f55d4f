package scheduler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pacer-load/pacer/internal/testrun"
)

func TestTrimCodes(t *testing.T) {
	m := map[string]uint64{OtherErrors: 5}
	for i := range 30 {
		m[string(rune('A'+i))] = uint64(100 - i) // A most frequent
	}
	got := TrimCodes(m)
	if len(got) != MaxErrorCodes+1 || got["A"] != 100 || got["T"] != 81 || got["U"] != 0 {
		t.Fatalf("trimmed to %v", got)
	}
	// U..^ (10 codes, 80 down to 71) and the 5 already other.
	if got[OtherErrors] != 5+(80+71)*10/2 {
		t.Fatalf("other = %d", got[OtherErrors])
	}
	per := map[string]uint64{}
	for i := range 100 {
		AddCode(per, []byte{byte(i)}, 1)
	}
	if len(per) > maxCodesPerConn || per[OtherErrors] != 100-(maxCodesPerConn-1) {
		t.Fatalf("a connection's tally holds %d codes, other %d", len(per), per[OtherErrors])
	}
}

func TestErrorText(t *testing.T) {
	long := strings.Repeat("é", MaxErrorText) // 2 bytes each
	if got := ErrorText([]byte(long)); len(got) > MaxErrorText || !strings.HasPrefix(long, got) || len(got) < MaxErrorText-1 {
		t.Fatalf("kept %d bytes, cut inside a character or too short", len(got))
	}
	if got := ErrorText([]byte("ERR x")); got != "ERR x" {
		t.Fatalf("short text changed to %q", got)
	}
}

// TestLargeMixesCostCountsNotHistograms: a mix of 1000 templates allocated
// three 270 KB recorders per command (about 0.8 GB). Above
// MaxTimedCommands, commands keep counts only.
func TestLargeMixesCostCountsNotHistograms(t *testing.T) {
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("cmd%d", i)
	}
	var ks []CommandStats
	if grew := testrun.Allocated(func() { ks = NewCommandStats(names, true) }); grew > 1<<20 {
		t.Fatalf("%d commands allocated %d bytes of per-command stats, want under 1 MiB", len(names), grew)
	}
	tallies := [][]CommandTally{make([]CommandTally, len(names))}
	tallies[0][7].Completed = 5
	res := CommandResults(names, ks, tallies)
	if len(res) != 1000 || res[7].Counts.Completed != 5 || res[7].Response != nil {
		t.Fatalf("command 7: %+v, want counts without histograms", res[7])
	}
	if small := NewCommandStats(names[:MaxTimedCommands], true); !Timed(small) || small[0].Lag == nil {
		t.Fatal("a mix of MaxTimedCommands commands lost its histograms")
	}
}

// TestMergeErrorCodesStaysTrimmed: results merged across bench -l loops
// keep the top MaxErrorCodes and OtherErrors, with the total unchanged.
func TestMergeErrorCodesStaysTrimmed(t *testing.T) {
	var sum map[string]uint64
	for loop := range 10 {
		m := map[string]uint64{}
		for i := range MaxErrorCodes {
			m[fmt.Sprintf("E%d-%d", loop, i)] = 1
		}
		sum = mergeErrorCodes(sum, m)
	}
	total := uint64(0)
	for _, v := range sum {
		total += v
	}
	if len(sum) > MaxErrorCodes+1 || total != 10*MaxErrorCodes || sum[OtherErrors] == 0 {
		t.Fatalf("merged to %d codes summing to %d (other %d)", len(sum), total, sum[OtherErrors])
	}
}
