package embedded

import (
	"crypto/tls"
	"testing"
	"time"
)

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no faults"},
		{Config{Faults: Faults{Stall: time.Millisecond, Every: time.Second}, TLS: &tls.Config{}}, "stall 1ms every 1s; TLS"},
		{Config{Password: "pw"}, "no faults; password required of user default"},
		{Config{User: "bob", Password: "pw"}, "no faults; password required of user bob"},
	} {
		if got := (&Server{cfg: tc.cfg}).Describe(); got != tc.want {
			t.Errorf("Describe = %q, want %q", got, tc.want)
		}
	}
}
