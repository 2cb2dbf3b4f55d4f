package cluster

import (
	"testing"

	"github.com/pacer-load/pacer/conn"
)

// TestPartition: each command goes to the primary of its key's slot; a
// tagged key gets the tag of its own name first; a command without a key
// where the spec says, or on a slot nobody owns, is told apart.
func TestPartition(t *testing.T) {
	top := NewTopology([]Node{{Addr: "a:1"}, {Addr: "b:1"}})
	top.Assign(0, 8191, 0)
	top.Assign(8192, Slots-2, 1)
	spec := KeySpec{First: 1, Last: 1, Step: 1}
	p := Partition{Topology: top, Spec: spec}
	for _, key := range []string{"key:000000000001", "key:000000000002", "foo", "{user1}:x"} {
		cmd := conn.AppendCommand(nil, "SET", key, "v")
		want := 0
		if Slot([]byte(key)) >= 8192 {
			want = 1
		}
		if o, slot, ok := p.Owner(cmd); !ok || slot != Slot([]byte(key)) || o != want {
			t.Errorf("%s: primary %d slot %d %v, want %d slot %d", key, o, slot, ok, want, Slot([]byte(key)))
		}
	}
	if _, _, ok := p.Owner(conn.AppendCommand(nil, "PING")); ok {
		t.Error("PING has a key")
	}
	// The last slot has no primary.
	key := "k:{" + string(Tag(Slots-1)) + "}"
	if o, slot, ok := p.Owner(conn.AppendCommand(nil, "SET", key, "v")); !ok || slot != Slots-1 || o != -1 {
		t.Errorf("%s: primary %d slot %d %v on the slot nobody owns", key, o, slot, ok)
	}
	tagged := Partition{Topology: top, Spec: spec, Tagged: true}
	cmd := conn.AppendCommand(nil, "SET", "key:{tag}:000000000042", "v")
	o, slot, ok := tagged.Owner(cmd)
	k, _ := conn.Arg(cmd, 1)
	if !ok || slot != TagSlot([]byte("key:{tag}:000000000042")) || Slot(k) != slot || o != top.Owner(slot) {
		t.Errorf("tagged: %q primary %d slot %d %v", k, o, slot, ok)
	}
}
