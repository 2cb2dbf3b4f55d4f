package cluster

import (
	"bytes"
	"sync"
)

// tagChars are the bytes of the tags Tag returns: letters and digits, so a
// tag never holds a brace or anything a terminal or a shell minds.
const tagChars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

var (
	tagOnce sync.Once
	tags    [Slots][3]byte
	tagLens [Slots]uint8
)

// Tag returns a hash tag of one to three letters or digits whose slot is
// slot: the shortest one, the first in tagChars order. redis-benchmark
// --cluster puts such a tag into "{tag}" to send a key to a chosen node.
// The slice is shared: do not modify it.
func Tag(slot uint16) []byte {
	tagOnce.Do(buildTags)
	slot &= Slots - 1
	return tags[slot][:tagLens[slot]]
}

// buildTags finds a tag for every slot: 62³ three-letter strings cover
// them all many times over (TestTagCoversEverySlot).
func buildTags() {
	var b [3]byte
	try := func(n int) {
		s := crc16(b[:n]) & (Slots - 1)
		if tagLens[s] == 0 {
			tags[s], tagLens[s] = b, uint8(n)
		}
	}
	for _, x := range []byte(tagChars) {
		b[0] = x
		try(1)
	}
	for _, x := range []byte(tagChars) {
		for _, y := range []byte(tagChars) {
			b[0], b[1] = x, y
			try(2)
		}
	}
	for _, x := range []byte(tagChars) {
		for _, y := range []byte(tagChars) {
			for _, z := range []byte(tagChars) {
				b[0], b[1], b[2] = x, y, z
				try(3)
			}
		}
	}
}

// PutTag writes slot's tag over a 5-byte "{tag}" at dst[0:5], keeping its
// length the way redis-benchmark does: "{ab}}" for a two-letter tag. The
// key then hashes to slot.
func PutTag(dst []byte, slot uint16) {
	t := Tag(slot)
	dst[0] = '{'
	n := copy(dst[1:4], t)
	for i := 1 + n; i < 5; i++ {
		dst[i] = '}'
	}
}

// tagLen is the length of redis-benchmark's "{tag}" and of the tags PutTag
// writes over it.
const tagLen = 5

// TagSlot is the slot to give the "{tag}" of a key that holds one (five
// bytes at its first '{', as PutTag writes them): the CRC16 of the key
// without those five bytes, so a key gets its tag from its own name. The
// same key then always lands on the same slot, whether pacer fill
// --cluster writes it or a test reads it ("key:{tag}:000000000042" is one
// key, not one per slot). A key without a '{' five bytes from its end
// gets its own Slot.
func TagSlot(key []byte) uint16 {
	i := bytes.IndexByte(key, '{')
	if i < 0 || i+tagLen > len(key) {
		return Slot(key)
	}
	return crc16More(crc16(key[:i]), key[i+tagLen:]) & (Slots - 1)
}
