package scenarios

import "testing"

var sink uint64

func BenchmarkRandUint64(b *testing.B) {
	r := NewRand(1)
	var s uint64
	for b.Loop() {
		s += r.Uint64()
	}
	sink = s
}

func BenchmarkRandBelow(b *testing.B) {
	r := NewRand(1)
	var s uint64
	for b.Loop() {
		s += r.Below(1000003)
	}
	sink = s
}
