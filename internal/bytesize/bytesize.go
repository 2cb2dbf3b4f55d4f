// Package bytesize reads and prints sizes in bytes as pacer's flags take
// them: 123, 4MB (10^6), 2MiB or 2m (2^20), 512KiB.
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

// units are the suffixes Parse reads, longest first.
var units = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1},
}

// Parse reads a size: 123, 4MB (10^6), 2MiB or 2m (2^20), 512KiB; case and
// spaces around the number do not matter. It refuses negative sizes and
// sizes above 2^62 bytes.
func Parse(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// Format prints a size the way Parse reads it back: in GiB, MiB or KiB
// when it is a whole number of them, else in bytes.
func Format(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10)
}
