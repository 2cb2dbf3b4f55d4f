package compare

import (
	"fmt"
	"io"
)

// WriteSLOs writes each run's --slo clauses, one line each, named by the
// run, after the comparison's table.
func WriteSLOs(w io.Writer, runs []Run) error {
	for _, r := range runs {
		if r.Test.SLO == nil {
			continue
		}
		for _, l := range r.Test.SLO.Lines() {
			if _, err := fmt.Fprintf(w, "%s: %s\n", r.Test.Name, l); err != nil {
				return err
			}
		}
	}
	return nil
}
