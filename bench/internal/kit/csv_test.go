package kit

import (
	"os/exec"
	"slices"
	"testing"
)

// RunCSV keeps only the quoted lines, as a cluster run prints its
// primaries before the CSV, and wants a row after the header.
func TestRunCSV(t *testing.T) {
	out := "Cluster has 3 master nodes:\n\nMaster 0: abc 127.0.0.1:7000\n\"test\",\"rps\"\n\"GET\",\"5.00\"\n"
	rows, err := RunCSV(exec.Command("printf", "%s", out), 2)
	if err != nil || len(rows) != 2 || !slices.Equal(rows[1], []string{"GET", "5.00"}) {
		t.Errorf("RunCSV = %q, %v; want the header and GET's row", rows, err)
	}
	if rows, err := RunCSV(exec.Command("printf", "%s", "\"test\",\"rps\"\n"), 2); err == nil {
		t.Errorf("RunCSV of a header alone = %q, want an error", rows)
	}
}
