package ab

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-load/pacer/internal/usage"
)

// TestConfigCheck: a session runs 1 to MaxRounds rounds of a positive
// duration, after a warmup that is not negative; anything else is a usage
// error naming the setting (in the Go API's words).
func TestConfigCheck(t *testing.T) {
	ok := Config{Rounds: 6, RoundDuration: 5 * time.Second, Warmup: time.Second}
	if err := ok.Check(); err != nil {
		t.Fatalf("%+v: %v", ok, err)
	}
	for want, c := range map[string]Config{
		"Rounds 0: want 1 to 1000":    {Rounds: 0, RoundDuration: time.Second},
		"Rounds 1001: want 1 to 1000": {Rounds: MaxRounds + 1, RoundDuration: time.Second},
		"RoundDuration 0s":            {Rounds: 1},
		"Warmup -1s":                  {Rounds: 1, RoundDuration: time.Second, Warmup: -time.Second},
	} {
		if err := c.Check(); err == nil || !usage.Is(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want a usage error with %q", c, err, want)
		}
	}
}
