package scheduler

import (
	"strconv"
	"strings"

	"github.com/pacer-load/pacer/internal/usage"
)

// JobIndexEnv is the variable Kubernetes sets in each pod of an Indexed
// Job: its completion index, from 0.
const JobIndexEnv = "JOB_COMPLETION_INDEX"

// ParseShard reads --shard: K/N, or auto/N with K the value of
// JobIndexEnv plus 1 (lookup reads the environment). Its errors are usage
// errors in the flag's words.
func ParseShard(v string, lookup func(string) (string, bool)) (k, n int, err error) {
	ks, ns, ok := strings.Cut(strings.TrimSpace(v), "/")
	n, nerr := strconv.Atoi(ns)
	if !ok || nerr != nil || n < 1 || n > MaxShards {
		return 0, 0, usage.Errorf("--shard %q: want K/N such as 2/4 (N from 1 to %d), or auto/N", v, MaxShards)
	}
	if ks == "auto" {
		idx, set := lookup(JobIndexEnv)
		if !set {
			return 0, 0, usage.Errorf("--shard %s: %s is not set (a Kubernetes Indexed Job sets it); give K/N", v, JobIndexEnv)
		}
		i, err := strconv.Atoi(strings.TrimSpace(idx))
		if err != nil || i < 0 || i >= n {
			return 0, 0, usage.Errorf("--shard %s: %s=%q is not an index from 0 to %d", v, JobIndexEnv, idx, n-1)
		}
		return i + 1, n, nil
	}
	k, err = strconv.Atoi(ks)
	if err != nil || k < 1 || k > n {
		return 0, 0, usage.Errorf("--shard %q: K must be from 1 to %d", v, n)
	}
	return k, n, nil
}
