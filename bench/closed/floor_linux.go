package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"
)

// floorClient is the least a closed-loop client can do per request, for
// a floor beside the tools' CPU: one thread, its connections in one epoll
// instance, and for every connection whose batch of pipeline replies has
// arrived, the next batch written at once. No timing, no histogram, no
// key: GET of one key the server does not hold ("$-1\r\n"), so nothing
// parses beyond counting. It prints redis-benchmark's CSV (its rate, 0 for
// the latencies it does not measure).
func floorClient(addr string, clients, pipeline, requests int) error {
	runtime.LockOSThread()
	const reply = "$-1\r\n"
	cmd := bytes.Repeat([]byte("*2\r\n$3\r\nGET\r\n$15\r\npacer-floor-key\r\n"), pipeline)
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	defer syscall.Close(epfd)
	type client struct {
		fd      int
		f       *os.File
		pending int // bytes of replies still due for the batch in flight
	}
	cs := make([]*client, clients)
	batchBytes := pipeline * len(reply)
	for i := range cs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		f, err := c.(*net.TCPConn).File() // a blocking duplicate this thread owns
		c.Close()
		if err != nil {
			return err
		}
		fd := int(f.Fd())
		if err := syscall.SetNonblock(fd, true); err != nil {
			return err
		}
		cs[i] = &client{fd: fd, f: f}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(i)}
		if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return err
		}
	}
	defer func() {
		for _, c := range cs {
			c.f.Close()
		}
	}()
	sent, done := 0, 0
	send := func(c *client) error {
		if sent >= requests {
			return nil
		}
		if _, err := syscall.Write(c.fd, cmd); err != nil {
			return err
		}
		sent += pipeline
		c.pending = batchBytes
		return nil
	}
	start := time.Now()
	for _, c := range cs {
		if err := send(c); err != nil {
			return err
		}
	}
	events := make([]syscall.EpollEvent, clients)
	buf := make([]byte, 64<<10)
	for done < sent {
		n, err := syscall.EpollWait(epfd, events, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		for _, ev := range events[:n] {
			c := cs[ev.Fd]
			k, err := syscall.Read(c.fd, buf)
			if err == syscall.EAGAIN {
				continue
			}
			if err != nil || k == 0 {
				return fmt.Errorf("read: %v (%d bytes)", err, k)
			}
			c.pending -= k
			if c.pending > 0 {
				continue
			}
			done += pipeline
			if err := send(c); err != nil {
				return err
			}
		}
	}
	rps := float64(done) / time.Since(start).Seconds()
	fmt.Printf("\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\"\n\"GET\",\"%.2f\",\"0\",\"0\",\"0\"\n", rps)
	return nil
}
