// Package cluster owns what a client of Redis Cluster must know: the hash
// slot of a key, where a command's keys are, the slot map (which primary
// serves which slot) and the -MOVED / -ASK redirections. It routes nothing
// itself: the scheduler asks it where a command goes.
package cluster

// Slots is the number of hash slots of a Redis Cluster.
const Slots = 16384

// crcTable is CRC16/XMODEM (polynomial 0x1021, initial value 0), the CRC
// Redis Cluster hashes keys with.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// crc16 is CRC16/XMODEM of b.
func crc16(b []byte) uint16 { return crc16More(0, b) }

// crc16More continues CRC16/XMODEM c over b.
func crc16More(c uint16, b []byte) uint16 {
	for _, x := range b {
		c = c<<8 ^ crcTable[byte(c>>8)^x]
	}
	return c
}

// Slot is the key's hash slot: CRC16/XMODEM of the key, or of its hash tag
// (the bytes between the first '{' and the next '}' after it, when
// non-empty), mod 16384.
func Slot(key []byte) uint16 {
	return crc16(HashTag(key)) & (Slots - 1)
}

// HashTag returns the part of key that is hashed: the bytes between the
// first '{' and the first '}' after it when there are any, else the whole
// key (as Redis does, "{}" and a '{' without '}' hash the whole key).
func HashTag(key []byte) []byte {
	for i, c := range key {
		if c != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j == i+1 {
					return key
				}
				return key[i+1 : j]
			}
		}
		return key
	}
	return key
}
