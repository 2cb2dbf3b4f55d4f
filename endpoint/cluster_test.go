package endpoint

import (
	"context"
	"testing"

	"github.com/pacer-load/pacer/conn"
)

// TestRouteKeysOutsideACluster: a target that is not a cluster has no
// keys to route, and nothing is asked (the address below listens to
// nobody).
func TestRouteKeysOutsideACluster(t *testing.T) {
	tgt := &Target{Options: conn.Options{Addr: "127.0.0.1:1"}}
	keys, err := tgt.RouteKeys(context.Background(), nil, "bench --cluster")
	if err != nil || keys.Specs != nil || keys.Tagged != nil {
		t.Fatalf("keys %+v, err %v", keys, err)
	}
}
