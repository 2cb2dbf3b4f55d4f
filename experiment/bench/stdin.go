package bench

import (
	"fmt"
	"io"
	"strings"

	"github.com/pacer-load/pacer/internal/bytesize"
	"github.com/pacer-load/pacer/internal/usage"
	"github.com/pacer-load/pacer/scenarios"
)

// ReadLastArg reads -x's argument from stdin: at most what clients ×
// pipeline copies of it may hold in flight within budget bytes, and never
// more than scenarios.MaxValueSize bytes. Reading stops one byte past the
// limit, so an endless stdin (< /dev/zero) costs the limit, not the
// machine. Too much is a usage error.
func ReadLastArg(stdin io.Reader, clients, pipeline int, budget int64) (string, error) {
	limit := int64(scenarios.MaxValueSize)
	why := "the largest value Redis accepts (proto-max-bulk-len)"
	if inFlight := budget / (int64(clients) * int64(pipeline)); inFlight < limit {
		limit = inFlight
		if limit >= 1<<20 {
			limit &^= 1<<20 - 1 // whole MiB, for the message
		}
		why = fmt.Sprintf("the most -c %d × -P %d copies may hold in flight (%s): lower -c or -P", clients, pipeline, bytesize.Format(budget))
	}
	return readLimit(stdin, limit, why)
}

func readLimit(stdin io.Reader, limit int64, why string) (string, error) {
	// A strings.Builder grows by appending and hands its bytes over
	// without a copy.
	var b strings.Builder
	if _, err := io.Copy(&b, io.LimitReader(stdin, limit+1)); err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	if int64(b.Len()) > limit {
		return "", usage.Flagf("x", "{x}: stdin holds more than %s, %s", bytesize.Format(limit), why)
	}
	return b.String(), nil
}
