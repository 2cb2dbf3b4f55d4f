package report

import (
	"strings"
	"testing"
)

func TestParseSLO(t *testing.T) {
	good := []string{"p99<5ms", "p99.9<=20ms, errors<0.1%", "max<1s,mean<500us", "errors<=0.001", "unsent<1%", "rate>=9500", "rate>10k", "P50<1ms"}
	for _, s := range good {
		if _, err := ParseSLO(s); err != nil {
			t.Errorf("ParseSLO(%q): %v", s, err)
		}
	}
	bad := []string{"", ",", "p99", "p99<", "p99<5", "p99<fast", "p98<5ms", "errors<150%", "errors<2", "rate>=0", "latency<5ms", "<5ms", "p99=5ms"}
	for _, s := range bad {
		if _, err := ParseSLO(s); err == nil {
			t.Errorf("ParseSLO(%q) accepted", s)
		}
	}
}

func TestSLOCheck(t *testing.T) {
	r := sample() // response 1..10 ms uniform; 2 errors + 2 timeouts of 10003
	pass, _ := ParseSLO("p50<6ms,p99<=10ms,errors<0.1%,rate>=9000")
	if got := pass.Check(r); !got.Pass || len(got.Checked) != 4 {
		t.Fatalf("%+v", got)
	}
	fail, _ := ParseSLO("p99<5ms,errors<0.01%,rate>20k")
	got := fail.Check(r)
	if got.Pass || len(got.Violations) != 3 || !strings.Contains(got.Line(), "VIOLATED") || !strings.Contains(got.Violations[0], "p99 9.904 ms >= 5.000 ms") {
		t.Fatalf("%+v", got)
	}
	if (SLO{}).Check(r) != nil {
		t.Fatal("no SLO, yet a verdict")
	}
}
