package watch

import (
	"fmt"
	"io"
	"time"

	"github.com/pacer-load/pacer/internal/safetext"
)

// Errors returns a printer of a run's error replies (-e): "Error from
// server: TEXT" on w, at most one a second, as redis-benchmark 6 did, the
// text escaped so that a server's bytes never drive the terminal. It is
// safe for concurrent use by the run's readers.
func Errors(w io.Writer) func(text []byte) {
	last := make(chan int64, 1)
	last <- 0
	return func(text []byte) {
		now := time.Now().Unix()
		l := <-last
		if now != l {
			fmt.Fprintf(w, "Error from server: %s\n", safetext.Escape(string(text)))
			l = now
		}
		last <- l
	}
}
