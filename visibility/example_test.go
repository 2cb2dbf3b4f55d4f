package visibility_test

import (
	"context"
	"fmt"

	"github.com/pacer-load/pacer/visibility"
)

// A prober needs a rate and replicas to read its probes from.
func ExampleNew() {
	_, err := visibility.New(context.Background(), visibility.Config{Rate: 100})
	fmt.Println(err)
	// Output: visibility: no replica to read probes from
}
