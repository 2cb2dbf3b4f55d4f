package cluster

import (
	"bytes"

	"github.com/pacer-load/pacer/conn"
)

// The keys of encoded commands (RESP arrays, as the scenarios' templates
// write them), read and tagged in place without allocating: the open
// loop's router and pacer fill --cluster use them on every command.

// EncodedSlot returns the slot of the first key spec places in cmd; ok is
// false when cmd has none there (a keyless spec, an inline command).
func EncodedSlot(cmd []byte, spec KeySpec) (slot uint16, ok bool) {
	key, ok := firstKey(cmd, spec)
	if !ok {
		return 0, false
	}
	return Slot(key), true
}

// EncodedTagSlot is EncodedSlot for a command whose keys hold a "{tag}":
// the TagSlot of its first key, the slot PutKeyTags should give them all.
func EncodedTagSlot(cmd []byte, spec KeySpec) (slot uint16, ok bool) {
	key, ok := firstKey(cmd, spec)
	if !ok {
		return 0, false
	}
	return TagSlot(key), true
}

func firstKey(cmd []byte, spec KeySpec) ([]byte, bool) {
	if spec.First <= 0 || spec.Step <= 0 {
		return nil, false
	}
	return conn.Arg(cmd, spec.First)
}

// PutKeyTags writes slot's tag over the "{tag}" (the five bytes at the
// first '{') of every key of cmd that spec places, so that they all hash
// to slot.
func PutKeyTags(cmd []byte, spec KeySpec, slot uint16) {
	n, ok := conn.ArgCount(cmd)
	if !ok || spec.First <= 0 || spec.Step <= 0 {
		return
	}
	last := spec.Last
	if last < 0 {
		last += n
	}
	for a := spec.First; a <= last && a < n; a += spec.Step {
		from, to, ok := conn.ArgBounds(cmd, a)
		if !ok {
			return
		}
		if j := bytes.IndexByte(cmd[from:to], '{'); j >= 0 && from+j+tagLen <= to {
			PutTag(cmd[from+j:from+j+tagLen], slot)
		}
	}
}
