package host

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ServerProcess is the process that serves a target on this host, as
// FindServer found it.
type ServerProcess struct {
	// PID is its process id in pacer's pid namespace; Name its command
	// name (/proc/PID/comm).
	PID  int
	Name string
	// How says how it was found: "the listening socket's owner,
	// confirmed by INFO process_id", for instance.
	How string
	// Self is set when the owner is pacer's own process (the embedded
	// target): its threads are pacer's, and the hiccup meter sees their
	// delays already.
	Self bool
}

// ErrNotFound is returned by FindServer when no listening socket of this
// host matches the target, or its owner cannot be seen (another user's
// process without the privilege to read its descriptors, a server in
// another network namespace reached through a forwarded port).
var ErrNotFound = errors.New("no process of this host listens there")

// procRoot is where the proc filesystem is mounted.
const procRoot = "/proc"

// maxScan bounds the processes FindServer looks through for a socket's
// owner, so that a host with very many processes costs a bounded time.
const maxScan = 20000

// FindServer finds the process that listens where a connection to addr
// over network goes (IsLocal's targets: a unix socket, or a TCP port on
// loopback or one of this host's addresses): the owner of the listening
// socket, found from /proc/net/{tcp,tcp6,unix} and the descriptors of
// /proc/*/fd. infoPID is the server's own process_id from INFO server (0:
// not known): when given, it is looked at first and the owner must be it
// (or be it in a pid namespace of its own, /proc/PID/status's NSpid), so
// that a port forwarded by a proxy (docker-proxy) is not taken for the
// server. Linux only; elsewhere ErrNotFound.
func FindServer(network, addr string, infoPID int) (ServerProcess, error) {
	return findServer(procRoot, os.Getpid(), network, addr, infoPID)
}

func findServer(root string, self int, network, addr string, infoPID int) (ServerProcess, error) {
	inodes, err := listeners(root, network, addr)
	if err != nil {
		return ServerProcess{}, err
	}
	if len(inodes) == 0 {
		return ServerProcess{}, ErrNotFound
	}
	pid := 0
	if infoPID > 0 && owns(root, infoPID, inodes) {
		pid = infoPID
	} else {
		pid = scanOwners(root, inodes)
	}
	if pid == 0 {
		return ServerProcess{}, ErrNotFound
	}
	sp := ServerProcess{PID: pid, Name: comm(root, pid), Self: pid == self}
	switch {
	case infoPID > 0 && pid != infoPID && nsPID(root, pid) != infoPID:
		return ServerProcess{}, fmt.Errorf("the port's listener is pid %d (%s), not the server (INFO process_id %d): a proxy, or a server out of sight", pid, sp.Name, infoPID)
	case sp.Self:
		sp.How = "pacer's own process (the embedded target)"
	case infoPID == 0:
		sp.How = "the listening socket's owner (the server did not say its process_id)"
	case pid == infoPID:
		sp.How = "the listening socket's owner, confirmed by INFO process_id"
	default:
		sp.How = fmt.Sprintf("the listening socket's owner, INFO process_id %d in its own pid namespace", infoPID)
	}
	return sp, nil
}

// listeners returns the inodes of the listening sockets a connection to
// addr over network may reach.
func listeners(root, network, addr string) (map[uint64]bool, error) {
	out := map[uint64]bool{}
	switch network {
	case "unix", "unixpacket":
		path, err := filepath.Abs(addr)
		if err != nil {
			return nil, err
		}
		return out, scanUnix(filepath.Join(root, "net", "unix"), path, out)
	case "", "tcp", "tcp4", "tcp6":
	default:
		return out, nil
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %v", portText, err)
	}
	ip := net.ParseIP(host) // nil for a name: any local address on the port
	for _, f := range []string{"tcp", "tcp6"} {
		if err := scanTCP(filepath.Join(root, "net", f), ip, uint16(port), out); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	return out, nil
}

// tcpListen is /proc/net/tcp's state of a listening socket.
const tcpListen = "0A"

// scanTCP adds the inodes of the sockets of file (/proc/net/tcp or tcp6)
// that listen on port at ip, or at every address (nil ip: at any).
func scanTCP(file string, ip net.IP, port uint16, out map[uint64]bool) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	for line := range bytes.Lines(b) {
		f := strings.Fields(string(line))
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		local := strings.Split(f[1], ":")
		if len(local) != 2 {
			continue
		}
		p, err := strconv.ParseUint(local[1], 16, 16)
		if err != nil || uint16(p) != port {
			continue
		}
		at := procIP(local[0])
		if ip != nil && at != nil && !at.IsUnspecified() && !at.Equal(ip) {
			continue
		}
		if inode, err := strconv.ParseUint(f[9], 10, 64); err == nil && inode > 0 {
			out[inode] = true
		}
	}
	return nil
}

// procIP decodes /proc/net/tcp's address: 4 or 16 bytes in hex, each
// 32-bit word in the host's byte order (little-endian on every platform
// pacer runs on).
func procIP(h string) net.IP {
	if len(h) != 8 && len(h) != 32 {
		return nil
	}
	raw := make([]byte, len(h)/2)
	for i := range raw {
		v, err := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
		if err != nil {
			return nil
		}
		raw[i] = byte(v)
	}
	for w := 0; w+4 <= len(raw); w += 4 {
		raw[w], raw[w+1], raw[w+2], raw[w+3] = raw[w+3], raw[w+2], raw[w+1], raw[w]
	}
	return net.IP(raw)
}

// unixAcceptCon is /proc/net/unix's flag of a listening socket.
const unixAcceptCon = 0x10000

// scanUnix adds the inode of the listening unix socket at path.
func scanUnix(file, path string, out map[uint64]bool) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	for line := range bytes.Lines(b) {
		f := strings.Fields(string(line))
		if len(f) < 8 || f[7] != path {
			continue
		}
		flags, err := strconv.ParseUint(f[3], 16, 32)
		if err != nil || flags&unixAcceptCon == 0 {
			continue
		}
		if inode, err := strconv.ParseUint(f[6], 10, 64); err == nil && inode > 0 {
			out[inode] = true
		}
	}
	return nil
}

// owns reports whether process pid holds one of the sockets.
func owns(root string, pid int, inodes map[uint64]bool) bool {
	dir := filepath.Join(root, strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil || !strings.HasPrefix(link, "socket:[") || !strings.HasSuffix(link, "]") {
			continue
		}
		if n, err := strconv.ParseUint(link[len("socket:["):len(link)-1], 10, 64); err == nil && inodes[n] {
			return true
		}
	}
	return false
}

// scanOwners returns the first process (lowest pid) holding one of the
// sockets, 0 when none can be seen.
func scanOwners(root string, inodes map[uint64]bool) int {
	ents, err := os.ReadDir(root)
	if err != nil {
		return 0
	}
	seen := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if seen++; seen > maxScan {
			return 0
		}
		if owns(root, pid, inodes) {
			return pid
		}
	}
	return 0
}

// comm is a process's command name ("" when it cannot be read).
func comm(root string, pid int) string {
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "comm"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// nsPID is a process's pid in its innermost pid namespace (the last of
// /proc/PID/status's NSpid), 0 when unknown.
func nsPID(root string, pid int) int {
	f, err := os.Open(filepath.Join(root, strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "NSpid:"); ok {
			fs := strings.Fields(rest)
			if len(fs) == 0 {
				return 0
			}
			n, _ := strconv.Atoi(fs[len(fs)-1])
			return n
		}
	}
	return 0
}
