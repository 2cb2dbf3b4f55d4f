package metrics

import (
	"hash/fnv"
	"strconv"
	"unicode/utf8"

	"github.com/pacer-load/pacer/internal/safetext"
)

// maxLabel bounds a label value in bytes. A test is named after its
// command line, values included (pacer run -- SET k <100 KB>), and every
// series of the test repeats its name in every scrape.
const maxLabel = 200

// labelValue makes s a label value Prometheus accepts and a person can
// read: bytes that are not valid UTF-8 and control bytes are written \xNN,
// as pacer's text output writes them (a binary key is legitimate, and a
// label value that is not UTF-8 fails the whole scrape), and a value
// longer than maxLabel is cut, with a hash of the whole, so two long names
// that share a beginning stay two label sets.
func labelValue(s string) string {
	e := safetext.Escape(s)
	if len(e) <= maxLabel {
		return e
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	cut := maxLabel - 20
	for cut > 0 && !utf8.RuneStart(e[cut]) {
		cut--
	}
	return e[:cut] + "…#" + strconv.FormatUint(h.Sum64(), 16)
}
