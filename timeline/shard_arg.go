package timeline

import (
	"errors"
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/internal/usage"
)

// JobIndexEnv is the variable Kubernetes sets in each pod of an Indexed
// Job: its completion index, from 0.
const JobIndexEnv = "JOB_COMPLETION_INDEX"

// ParseShard reads --shard: K/N, or auto/N with K the value of
// JobIndexEnv plus 1 (lookup reads the environment). K and N are written
// in digits only: no sign, no leading zero, no spaces, so that " 1/3",
// "+1/3" and "01/3" are refused rather than read as 1/3. Its errors are
// usage errors in the flag's words.
func ParseShard(v string, lookup func(string) (string, bool)) (k, n int, err error) {
	ks, ns, ok := strings.Cut(v, "/")
	n, nerr := strconv.Atoi(ns)
	if !ok || nerr != nil || plainDigits(ns) != nil || n < 1 || n > MaxShards {
		return 0, 0, usage.Flagf("shard", "{shard} %q: want K/N such as 2/4 (N from 1 to %d), or auto/N", v, MaxShards)
	}
	if ks == "auto" {
		idx, set := lookup(JobIndexEnv)
		if !set {
			return 0, 0, usage.Flagf("shard", "{shard} %s: %s is not set (a Kubernetes Indexed Job sets it); give K/N", v, JobIndexEnv)
		}
		i, err := strconv.Atoi(strings.TrimSpace(idx))
		if err != nil || i < 0 || i >= n {
			return 0, 0, usage.Flagf("shard", "{shard} %s: %s=%q is not an index from 0 to %d", v, JobIndexEnv, idx, n-1)
		}
		return i + 1, n, nil
	}
	if err := plainDigits(ks); err != nil {
		return 0, 0, usage.Flagf("shard", "{shard} %q: K %q %v", v, ks, err)
	}
	k, err = strconv.Atoi(ks)
	if err != nil || k < 1 || k > n {
		return 0, 0, usage.Flagf("shard", "{shard} %q: K must be from 1 to %d", v, n)
	}
	return k, n, nil
}

// plainDigits checks that s is a number written in digits only, as a
// shard index is: what is no number at all says so (1.5, one), a sign, a
// space or a leading zero is refused by name. Its message follows the
// quoted text.
func plainDigits(s string) error {
	digits := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '+' || c == '-' || c == ' ' || c == '\t':
		default:
			return errors.New("is not a whole number")
		}
	}
	switch {
	case digits == 0:
		return errors.New("is not a whole number")
	case digits < len(s):
		return errors.New("is not plain: digits only (no sign, no spaces)")
	case len(s) > 1 && s[0] == '0':
		return errors.New("is not plain: no leading zero")
	}
	return nil
}
