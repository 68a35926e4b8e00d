// Command pause is the node suite's sandbox ("pause") image and the program
// of its multi-architecture test image: it sleeps until SIGTERM or SIGINT and
// reaps orphaned children meanwhile, as the Kubernetes pause container does.
// The suite builds it for every platform; nothing is pulled from the internet.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			return
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
