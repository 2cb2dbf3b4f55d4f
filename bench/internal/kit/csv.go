package kit

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// RunCSV runs a tool asked for --csv output (redis-benchmark, or pacer in
// its format), its stderr passed through, and returns the rows of its CSV
// lines, the header first and at least one row after it, whose first row
// after the header has at least cols fields. Only the lines that start
// with a quote are CSV: in cluster mode both tools print the primaries
// first.
func RunCSV(cmd *exec.Cmd, cols int) ([][]string, error) {
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	var text strings.Builder
	for l := range strings.Lines(out.String()) {
		if strings.HasPrefix(l, `"`) {
			text.WriteString(l)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(text.String())).ReadAll()
	if err != nil || len(rows) < 2 || len(rows[1]) < cols {
		return nil, fmt.Errorf("unexpected CSV %q: %v", out.String(), err)
	}
	return rows, nil
}
