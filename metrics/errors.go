package metrics

import (
	"net/http"
)

// errorLine is all a client learns when a scrape fails: what went wrong
// inside (a collector's panic, with its stack and source paths) is not
// for whoever can reach the port.
const errorLine = "pacer: the metrics could not be gathered\n"

// oneLineErrors wraps h so that a response with a 5xx status carries
// errorLine instead of h's body, and a panic in h becomes such a response
// (when nothing was written yet) instead of net/http's stack in the log.
func oneLineErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ow := &oneLineWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				if !ow.wrote {
					ow.WriteHeader(http.StatusInternalServerError)
					return
				}
				panic(http.ErrAbortHandler) // cut the response short, silently
			}
		}()
		h.ServeHTTP(ow, r)
	})
}

// oneLineWriter replaces the body of a 5xx response with errorLine.
type oneLineWriter struct {
	http.ResponseWriter
	wrote, failed bool
}

func (w *oneLineWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if code < 500 {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.failed = true
	hd := w.Header()
	for _, k := range []string{"Content-Encoding", "Content-Length", "Content-Type"} {
		hd.Del(k)
	}
	hd.Set("Content-Type", "text/plain; charset=utf-8")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.ResponseWriter.WriteHeader(code)
	w.ResponseWriter.Write([]byte(errorLine))
}

func (w *oneLineWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.failed {
		return len(p), nil // h's own error text is dropped
	}
	return w.ResponseWriter.Write(p)
}
