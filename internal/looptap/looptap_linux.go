//go:build linux

package looptap

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Tap is a running packet socket on lo.
type Tap struct {
	cfg     Config
	fd      int
	stop    atomic.Bool
	done    chan struct{}
	packets atomic.Uint64

	mu    sync.Mutex
	stats Stats
	flows map[uint16]*flow
}

// flow is one connection's stream as the tap follows it.
type flow struct {
	isn, next uint32
}

// Start opens the tap and starts its goroutine.
func Start(cfg Config) (*Tap, error) {
	if cfg.Poll <= 0 {
		cfg.Poll = 50 * time.Millisecond
	}
	lo, err := loopback()
	if err != nil {
		return nil, err
	}
	// Protocol 0: the socket receives nothing until it is bound, after its
	// filter is on, so no packet of another flow slips in before.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	t := &Tap{cfg: cfg, fd: fd, done: make(chan struct{}), flows: map[uint16]*flow{}}
	fail := func(what string, err error) (*Tap, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("looptap: %s: %w", what, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return fail("SO_TIMESTAMPNS", err)
	}
	// A large buffer, so a burst does not outrun the reader; the kernel
	// counts what it drops anyway (Stats.Dropped).
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20); err != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 64<<20)
	}
	// The kernel keeps only what is passed on: reading every segment of
	// both directions, twice each (leaving and arriving), would cost the
	// tap four times the reads and the machine the CPU.
	filter := serverSegments(cfg.ServerPort)
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER,
		&unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}); err != nil {
		return fail("SO_ATTACH_FILTER", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_IP), Ifindex: lo}); err != nil {
		return fail("bind to lo", err)
	}
	tv := unix.NsecToTimeval(int64(cfg.Poll))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fail("SO_RCVTIMEO", err)
	}
	go t.read()
	return t, nil
}

// serverSegments is a classic BPF program that keeps the arriving copies
// (PACKET_HOST) of IPv4 TCP segments from port with a payload: what
// segment would pass on.
func serverSegments(port uint16) []unix.SockFilter {
	const (
		ldW, ldH, ldB  = 0x20, 0x28, 0x30 // ld [k], ldh [k], ldb [k]
		ldxMSH         = 0xb1             // ldx 4*([k]&0xf)
		ldHInd, ldBInd = 0x48, 0x50       // ldh [x+k], ldb [x+k]
		jeqK, jgtX     = 0x15, 0x2d
		rshK, lshK     = 0x74, 0x64
		addX, tax      = 0x0c, 0x07
		retK           = 0x06
		pktType        = 0xfffff004 // SKF_AD_OFF + SKF_AD_PKTTYPE
	)
	return []unix.SockFilter{
		{Code: ldW, K: pktType},
		{Code: jeqK, Jf: 13, K: unix.PACKET_HOST},
		{Code: ldB, K: 9}, // the IP protocol
		{Code: jeqK, Jf: 11, K: unix.IPPROTO_TCP},
		{Code: ldxMSH, K: 0}, // x = the IP header's length
		{Code: ldHInd, K: 0}, // the TCP source port
		{Code: jeqK, Jf: 8, K: uint32(port)},
		{Code: ldBInd, K: 12}, // the TCP data offset…
		{Code: rshK, K: 4},
		{Code: lshK, K: 2}, // …as the TCP header's length
		{Code: addX},
		{Code: tax},       // x = both headers' length
		{Code: ldH, K: 2}, // the IP total length
		{Code: jgtX, Jt: 0, Jf: 1},
		{Code: retK, K: 0x40000}, // keep it whole
		{Code: retK, K: 0},
	}
}

// loopback returns the loopback interface's index.
func loopback() (int, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return 0, err
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 {
			return i.Index, nil
		}
	}
	return 0, fmt.Errorf("%w: no loopback interface", ErrUnsupported)
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// read is the tap's goroutine.
func (t *Tap) read() {
	defer close(t.done)
	buf := make([]byte, 1<<16)
	oob := make([]byte, 128)
	for !t.stop.Load() {
		n, oobn, _, from, err := unix.Recvmsg(t.fd, buf, oob, 0)
		if err != nil {
			continue // the poll's timeout, or an interrupted call
		}
		t.packets.Add(1)
		// Each segment on lo passes the tap twice, leaving and arriving:
		// the arriving copy is the very buffer the receiving socket gets,
		// with its timestamp.
		if ll, ok := from.(*unix.SockaddrLinklayer); !ok || ll.Pkttype != unix.PACKET_HOST {
			continue
		}
		at := stamp(oob[:oobn])
		if at == 0 {
			continue
		}
		t.segment(buf[:n], toMono(at, t.cfg.Now))
	}
}

// segment passes on the payload of an IPv4 TCP segment from the server.
func (t *Tap) segment(p []byte, at int64) {
	if len(p) < 20 || p[0]>>4 != 4 || p[9] != unix.IPPROTO_TCP {
		return
	}
	ihl := int(p[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(p[2:]))
	if total > len(p) || ihl+20 > total {
		return
	}
	tcp := p[ihl:total]
	src, dst := binary.BigEndian.Uint16(tcp[0:]), binary.BigEndian.Uint16(tcp[2:])
	if src != t.cfg.ServerPort {
		return
	}
	seq := binary.BigEndian.Uint32(tcp[4:])
	off := int(tcp[12]>>4) * 4
	flags := tcp[13]
	if off < 20 || off > len(tcp) {
		return
	}
	payload := tcp[off:]
	t.mu.Lock()
	f := t.flows[dst]
	if f == nil {
		f = &flow{isn: seq, next: seq}
		if flags&0x02 != 0 { // SYN: the data starts one after
			f.isn, f.next = seq+1, seq+1
		}
		t.flows[dst] = f
	}
	if len(payload) == 0 {
		t.mu.Unlock()
		return
	}
	switch d := int32(seq - f.next); {
	case d < 0:
		// Seen already (a retransmission): pass on only what is new.
		if int(-d) >= len(payload) {
			t.stats.Retransmits++
			t.mu.Unlock()
			return
		}
		payload = payload[-d:]
		seq = f.next
	case d > 0:
		t.stats.Gaps++
	}
	f.next = seq + uint32(len(payload))
	t.stats.Segments++
	pos := uint64(seq - f.isn)
	t.mu.Unlock()
	if t.cfg.OnSegment != nil {
		t.cfg.OnSegment(Segment{Port: dst, Seq: pos, Payload: payload, At: at})
	}
}

// stamp reads the SCM_TIMESTAMPNS control message (CLOCK_REALTIME ns).
func stamp(oob []byte) int64 {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(m.Data[0:]))
			nsec := int64(binary.NativeEndian.Uint64(m.Data[8:]))
			return sec*1e9 + nsec
		}
	}
	return 0
}

// toMono converts a CLOCK_REALTIME instant to now's clock, from the
// offset of this moment, taken between two readings of now: the tightest
// of three pairs, so that a descheduling between the readings does not
// move it (as package rxstamp converts).
func toMono(real int64, now func() int64) int64 {
	best, gap := int64(0), int64(-1)
	for range 3 {
		m1 := now()
		wall := time.Now().UnixNano()
		m2 := now()
		if gap < 0 || m2-m1 < gap {
			best, gap = m1+(m2-m1)/2-(wall-real), m2-m1
		}
		if gap <= 2000 {
			break
		}
	}
	return best
}

// Stop ends the tap and returns what it saw.
func (t *Tap) Stop() Stats {
	if t.stop.CompareAndSwap(false, true) {
		<-t.done
		if st, err := unix.GetsockoptTpacketStats(t.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err == nil {
			t.stats.Dropped = uint64(st.Drops)
		}
		unix.Close(t.fd)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stats.Packets = t.packets.Load()
	return t.stats
}
