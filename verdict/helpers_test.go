package verdict

import (
	"testing"
	"time"

	"github.com/pacer-load/pacer/histo"
	"github.com/pacer-load/pacer/report"
	"github.com/pacer-load/pacer/scheduler"
	"github.com/pacer-load/pacer/timeline"
)

// asTest makes a crafted result into a test as NewTest does (without
// the server's side): its JSON form, slo as its SLO verdict (nil: none)
// and its verdict judged.
func asTest(t testing.TB, r *scheduler.Result, slo *report.SLOResult) *report.Test {
	t.Helper()
	tt, err := report.NewTest(r, report.TestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tt.SLO = slo
	j := Judge(tt)
	tt.Verdict, tt.VerdictReason = j.Verdict, j.Reason
	return tt
}

// sample is an open run of 10,003 requests at 10k/s: response 1..10 ms
// uniform, service half of it, send lag 10..19 ms; 2 errors, 2 timeouts
// and 1 unsent.
func sample() *scheduler.Result {
	resp, serv, lag := histo.NewRecorder(), histo.NewRecorder(), histo.NewRecorder()
	for i := int64(1); i <= 10000; i++ {
		resp.Record(i * 1000)
		serv.Record(i * 500)
		lag.Record(10000 + i%10*1000)
	}
	rate, _ := timeline.ParseRate("10k")
	return &scheduler.Result{
		Name: "SET", Mode: "open", TargetRate: rate, Arrival: "uniform", Pacing: "precise",
		Connections: 50,
		Counts:      scheduler.Counts{Scheduled: 10003, Sent: 10002, Completed: 9998, Errors: 2, Timeouts: 2, Unsent: 1},
		Window:      time.Second + 250*time.Microsecond,
		Response:    resp.Snapshot(), Service: serv.Snapshot(), Lag: lag.Snapshot(),
		ErrorCodes: map[string]uint64{"ERR": 1, "WRONGTYPE": 1},
		FirstError: "ERR",
		LagLimit:   time.Millisecond,
	}
}
