package scheduler

import (
	"strings"
	"testing"
)

func TestRedactMasksServerTextAndAddsCodes(t *testing.T) {
	mask := func(s string) string { return strings.ReplaceAll(s, "pw", "***") }
	r := &Result{FirstError: "ERR bad pw", ErrorCodes: map[string]uint64{"ERRpw": 2, "ERR***": 3},
		Commands: []CommandResult{{ErrorCodes: map[string]uint64{"pw": 1}}, {}}}
	r.Redact(mask)
	if r.FirstError != "ERR bad ***" || len(r.ErrorCodes) != 1 || r.ErrorCodes["ERR***"] != 5 {
		t.Errorf("test: %q %v", r.FirstError, r.ErrorCodes)
	}
	if r.Commands[0].ErrorCodes["***"] != 1 || r.Commands[1].ErrorCodes != nil {
		t.Errorf("commands: %v", r.Commands)
	}
	var none *Result
	none.Redact(mask) // a nil result is left alone
}
