package ab_test

import (
	"fmt"

	"github.com/pacer-load/pacer/experiment/ab"
)

// Six rounds alternate which side runs first, so that a drift within a
// round falls on A first as often as on B first.
func ExampleOrderText() {
	fmt.Println(ab.OrderText(6))
	fmt.Println(ab.Label(ab.B, 1, 6))
	// Output:
	// ABBAABBAABBA
	// b 2/6
}
