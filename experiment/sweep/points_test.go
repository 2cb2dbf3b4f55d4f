package sweep

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/internal/usage/usagetest"
)

// TestSetPoints: an open sweep's one -c, a closed sweep's lists, and the
// usage errors of each in the flags' words.
func TestSetPoints(t *testing.T) {
	none := func(string) bool { return false }
	var c Config
	if err := c.SetConns(" 20 ", false, 100); err != nil || c.Conns != 20 {
		t.Fatalf("-c 20: %d %v", c.Conns, err)
	}
	if err := c.SetClosed("1, 5,10", "1,16", 0, none, 100); err != nil || !reflect.DeepEqual(c.Clients, []int{1, 5, 10}) ||
		!reflect.DeepEqual(c.Pipelines, []int{1, 16}) || c.Drain != time.Nanosecond {
		t.Fatalf("closed: %v %v %v %v", c.Clients, c.Pipelines, c.Drain, err)
	}
	if e := c.Echo(true); e["sweep"] != "closed" || !reflect.DeepEqual(e["clients"], []int{1, 5, 10}) || e["rates"] != nil {
		t.Errorf("closed echo: %v", e)
	}
	c.Rates = []float64{1000}
	if e := c.Echo(false); e["sweep"] != "open" || !reflect.DeepEqual(e["rates"], []float64{1000}) || e["pacing"] == nil {
		t.Errorf("open echo: %v", e)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{c.SetConns("20", true, 100), "-P belongs to a closed sweep"},
		{c.SetConns("1,2", false, 100), `-c "1,2": want 1 to 100 connections (a list needs --closed)`},
		{c.SetConns("101", false, 100), `-c "101"`},
		{c.SetClosed("1", "1", 0, func(n string) bool { return n == "pacing" }, 100), "--pacing belongs to an open sweep"},
		{c.SetClosed("1,x", "1", 0, none, 100), `-c "1,x": want a list of 1 to 100 connections`},
		{c.SetClosed("1", "0", 0, none, 100), `-P "0"`},
	} {
		if !usage.Is(tc.err) || !strings.Contains(usagetest.CLI(tc.err), tc.want) {
			t.Errorf("%v, want a usage error with %q", tc.err, tc.want)
		}
	}
}
