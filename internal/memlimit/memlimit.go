// Package memlimit finds the memory limit a process runs under: its
// cgroup's (v2 memory.max, v1 memory.limit_in_bytes) and its resource
// limits on address space and data (ulimit -v, ulimit -d), and the
// runtime's soft limit set below it. Nothing here prevents running out of
// memory; the caller compares what it plans to hold with the limit before
// it allocates.
package memlimit

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
)

// Limit is the tightest memory limit found: Bytes (0 when there is none)
// and Source, which names it for a message ("cgroup memory.max",
// "ulimit -v").
type Limit struct {
	Bytes  int64
	Source string
	// AddressSpace is set when the limit is RLIMIT_AS, which counts
	// virtual memory: the Go runtime's own reservations (about 2 GB of
	// address space on linux/amd64, most of it never touched) count
	// against it too.
	AddressSpace bool
}

// Unlimited is the size from which a limit counts as none (cgroup v1
// reports "no limit" as a page-rounded 2^63-1).
const Unlimited = 1 << 62

// Find returns the process's tightest memory limit.
func Find() Limit {
	return find(os.ReadFile, syscall.Getrlimit)
}

func find(read func(string) ([]byte, error), getrlimit func(int, *syscall.Rlimit) error) Limit {
	var best Limit
	take := func(l Limit) {
		if l.Bytes > 0 && l.Bytes < Unlimited && (best.Bytes == 0 || l.Bytes < best.Bytes) {
			best = l
		}
	}
	take(Limit{Bytes: cgroupLimit(read), Source: "the cgroup's memory limit"})
	for _, r := range []struct {
		res    int
		source string
	}{{syscall.RLIMIT_AS, "ulimit -v"}, {syscall.RLIMIT_DATA, "ulimit -d"}} {
		var rl syscall.Rlimit
		if getrlimit(r.res, &rl) == nil && rl.Cur < Unlimited {
			take(Limit{Bytes: int64(rl.Cur), Source: r.source, AddressSpace: r.res == syscall.RLIMIT_AS})
		}
	}
	return best
}

// cgroupLimit reads the memory limit of the process's own cgroup (v2,
// else v1), at its path and at the mount's root (a container sees its
// own cgroup there); 0 when none is found.
func cgroupLimit(read func(string) ([]byte, error)) int64 {
	data, err := read("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	var limit int64
	take := func(file string) {
		b, err := read(file)
		if err != nil {
			return
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 && n < Unlimited && (limit == 0 || n < limit) {
			limit = n
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		p := path.Clean("/" + parts[2])
		switch {
		case parts[0] == "0" && parts[1] == "":
			take(path.Join("/sys/fs/cgroup", p, "memory.max"))
			take("/sys/fs/cgroup/memory.max")
		case hasController(parts[1], "memory"):
			take(path.Join("/sys/fs/cgroup/memory", p, "memory.limit_in_bytes"))
			take("/sys/fs/cgroup/memory/memory.limit_in_bytes")
		}
	}
	return limit
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}
