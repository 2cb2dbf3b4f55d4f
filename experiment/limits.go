package experiment

import (
	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/internal/usage"
)

// MaxClosedInFlight bounds what a closed loop may hold in flight, in
// bytes: connections × pipeline × the largest command of a test.
const MaxClosedInFlight = 1 << 30

// CheckClosedBudget refuses a closed loop of conns connections with
// pipeline commands each that could hold more than MaxClosedInFlight
// bytes in flight with one of tests.
func CheckClosedBudget(tests []Test, conns, pipeline int) error {
	for _, t := range tests {
		if t.Recipe == nil {
			continue // a fixed command (Command): its caller sized it
		}
		l := int64(t.Recipe.MaxCommandSize()) // RESP framing and the largest value included
		if total := int64(conns) * int64(pipeline) * l; total > MaxClosedInFlight {
			return usage.Flagf("", "{c} %d × {P} %d × %s (the largest command of %s) = %s in flight; at most %s: lower {c}, {P} or {d}",
				conns, pipeline, bytesize.Format(l), t.Title, bytesize.Format(total), bytesize.Format(MaxClosedInFlight))
		}
	}
	return nil
}

// CheckMaxBuffer refuses a test with a command that can never fit a
// connection's write buffer of maxBuffer bytes.
func CheckMaxBuffer(tests []Test, maxBuffer int) error {
	for _, t := range tests {
		if t.Recipe == nil {
			continue
		}
		if l := int64(t.Recipe.MaxCommandSize()); l > int64(maxBuffer) {
			return usage.Flagf("max-buffer", "a command of %s (%s) is larger than {max-buffer} %s: raise {max-buffer} or lower {d}",
				bytesize.Format(l), t.Title, bytesize.Format(int64(maxBuffer)))
		}
	}
	return nil
}
