// Command burn is the node suite's CPU burner: one goroutine spins until
// SIGTERM or SIGINT, so its pod uses about a core whatever it requests.
// The suite builds it for the node's platform.
package main

import (
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

func main() {
	var stop atomic.Bool
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		stop.Store(true)
	}()
	n := 0
	for !stop.Load() {
		n++
	}
	_ = n
}
