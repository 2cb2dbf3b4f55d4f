package compare

import (
	"bytes"
	"testing"

	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/verdict"
)

// TestWriteSLOs: a line per clause, named by its run; a run without an
// SLO writes nothing.
func TestWriteSLOs(t *testing.T) {
	slo, err := verdict.ParseSLO("p99<5ms")
	if err != nil {
		t.Fatal(err)
	}
	res, err := slo.Check(&report.Test{})
	if err != nil {
		t.Fatal(err)
	}
	judged := &report.Test{Name: "GET at 1000/s", SLO: res}
	var b bytes.Buffer
	if err := WriteSLOs(&b, []Run{{Test: &report.Test{Name: "closed"}}, {Test: judged}}); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !bytes.HasPrefix(b.Bytes(), []byte("GET at 1000/s: ")) || bytes.Count(b.Bytes(), []byte("\n")) != len(judged.SLO.Lines()) {
		t.Errorf("got %q", got)
	}
}
