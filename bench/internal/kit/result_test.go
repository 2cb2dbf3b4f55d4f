package kit

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// RunResult reads the document of a run that exits 4 (generator_behind)
// and refuses one that exits 1.
func TestRunResult(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	b, err := RunResult(exec.Command("sh", "-c", `echo '{}' > "$0"; exit 4`, path), path)
	if err != nil || string(b) != "{}\n" {
		t.Errorf("RunResult after exit 4 = %q, %v; want the document", b, err)
	}
	if b, err := RunResult(exec.Command("sh", "-c", `echo '{}' > "$0"; exit 1`, path), path); err == nil {
		t.Errorf("RunResult after exit 1 = %q, want an error", b)
	}
}

// PairedMedian takes the median of run r of b over run r of a, over the
// runs both have.
func TestPairedMedian(t *testing.T) {
	id := func(v float64) float64 { return v }
	if got := PairedMedian([]float64{1, 2, 4}, []float64{3, 2, 2, 100}, id); got != 1 {
		t.Errorf("PairedMedian = %v, want 1 (the ratios 3, 1, 0.5)", got)
	}
	if got := PairedMedian(nil, []float64{1}, id); got != 0 {
		t.Errorf("PairedMedian of no pairs = %v, want 0", got)
	}
}
