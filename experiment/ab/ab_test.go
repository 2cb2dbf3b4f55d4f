package ab

import "testing"

// Each pair runs both sides once, in alternating order: over an even
// number of rounds each side runs first as often as second.
func TestOrder(t *testing.T) {
	t.Parallel()
	first := [2]int{}
	for i := range 6 {
		o := Order(i)
		if o[0] == o[1] {
			t.Fatalf("round %d runs %v", i, o)
		}
		first[o[0]]++
	}
	if first[A] != 3 || first[B] != 3 {
		t.Errorf("first in a round: A %d, B %d times of 6", first[A], first[B])
	}
	if got := OrderText(3); got != "ABBAAB" {
		t.Errorf("OrderText(3) = %q", got)
	}
}
