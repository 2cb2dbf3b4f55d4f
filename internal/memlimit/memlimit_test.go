package memlimit

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"
)

// TestFind: the tightest of the cgroup's limit (v2 or v1, at the
// process's path or the mount's root) and RLIMIT_AS/RLIMIT_DATA, named.
func TestFind(t *testing.T) {
	t.Parallel()
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if s, ok := m[p]; ok {
				return []byte(s), nil
			}
			return nil, fs.ErrNotExist
		}
	}
	rlimits := func(as, data uint64) func(int, *syscall.Rlimit) error {
		return func(res int, rl *syscall.Rlimit) error {
			switch res {
			case syscall.RLIMIT_AS:
				rl.Cur = as
			case syscall.RLIMIT_DATA:
				rl.Cur = data
			default:
				return errors.New("no such limit")
			}
			return nil
		}
	}
	const inf = ^uint64(0)
	for _, c := range []struct {
		name   string
		files  map[string]string
		as, dt uint64
		want   Limit
	}{
		{"none", map[string]string{"/proc/self/cgroup": "0::/user.slice\n", "/sys/fs/cgroup/user.slice/memory.max": "max\n"}, inf, inf, Limit{}},
		{"cgroup v2", map[string]string{"/proc/self/cgroup": "0::/job\n", "/sys/fs/cgroup/job/memory.max": "4294967296\n"}, inf, inf,
			Limit{Bytes: 4 << 30, Source: "the cgroup's memory limit"}},
		{"cgroup v2 at the root", map[string]string{"/proc/self/cgroup": "0::/job\n", "/sys/fs/cgroup/memory.max": "1073741824\n"}, inf, inf,
			Limit{Bytes: 1 << 30, Source: "the cgroup's memory limit"}},
		{"cgroup v1, unlimited", map[string]string{"/proc/self/cgroup": "4:memory:/x\n", "/sys/fs/cgroup/memory/x/memory.limit_in_bytes": "9223372036854771712\n"}, inf, inf, Limit{}},
		{"cgroup v1", map[string]string{"/proc/self/cgroup": "4:cpu,memory:/x\n", "/sys/fs/cgroup/memory/x/memory.limit_in_bytes": "2147483648\n"}, inf, inf,
			Limit{Bytes: 2 << 30, Source: "the cgroup's memory limit"}},
		{"ulimit -v below the cgroup", map[string]string{"/proc/self/cgroup": "0::/job\n", "/sys/fs/cgroup/job/memory.max": "8589934592\n"}, 4 << 30, inf,
			Limit{Bytes: 4 << 30, Source: "ulimit -v", AddressSpace: true}},
		{"ulimit -d", nil, inf, 3 << 30, Limit{Bytes: 3 << 30, Source: "ulimit -d"}},
	} {
		if got := find(files(c.files), rlimits(c.as, c.dt)); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestSoft: 90% of the limit, less the runtime's reserved address space
// under ulimit -v; nothing without a limit or when nothing is left.
func TestSoft(t *testing.T) {
	for _, c := range []struct {
		l    Limit
		want int64
	}{
		{Limit{}, 0},
		{Limit{Bytes: 1000}, 900},
		{Limit{Bytes: 4 << 30, AddressSpace: true}, (2 << 30) / 10 * 9},
		{Limit{Bytes: 1 << 30, AddressSpace: true}, 0},
	} {
		if got := c.l.Soft(); got != c.want {
			t.Errorf("%+v: %d, want %d", c.l, got, c.want)
		}
	}
}
