package metrics

import (
	"testing"

	"github.com/pacer-load/pacer/scheduler"
)

// TestNilServerHookAndClose: without --metrics-addr the commands hold a
// nil Exporter; its Hook hands the driver the caller's own OnStart and its
// Close does nothing.
func TestNilServerHookAndClose(t *testing.T) {
	var s *Exporter
	called := false
	onStart, end := s.Hook("get", ModeOpen, func(*scheduler.Live) { called = true })
	onStart(nil)
	end()
	if !called {
		t.Error("the caller's OnStart was not called")
	}
	if onStart, _ := s.Hook("get", ModeOpen, nil); onStart != nil {
		t.Error("a nil OnStart became a hook")
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}
