// Command pause is the real node's pod sandbox ("pause") image: it holds the pod's namespaces, does nothing else,
// reaps children it inherits as PID 1 and exits on SIGINT/SIGTERM. It stands in for registry.k8s.io/pause, which
// cannot be pulled here; containerd is told to use this image as its sandbox image.
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
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
