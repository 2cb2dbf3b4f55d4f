// Command pause is the pod sandbox's process for deploy/e2e: it holds the
// pod's namespaces open and does nothing else, as Kubernetes' own pause
// does. It sleeps until SIGINT or SIGTERM and exits 0; as PID 1 of a pod
// that shares its process namespace it reaps the orphans re-parented to
// it. It is built static (CGO_ENABLED=0) into an image of its own file
// alone, so the e2e needs no registry.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every child that has exited, without waiting for one that
// has not.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
