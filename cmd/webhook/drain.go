package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// drainingContext returns a context that ends delay after the first signal
// on signals (a second one ends it at once), and a channel closed at the
// first signal, from when the replica reports itself not ready.
//
// The delay is server.shutdownDelay, beside the Deployment's preStop
// sleep: the API server picks a replica from the Service's EndpointSlices,
// which drop a terminating pod only once kube-controller-manager and the
// API server's informer have seen it go, seconds later on a busy control
// plane. An admission sent to a replica that has stopped listening fails,
// and with failurePolicy Ignore admits the pod without affinity.
func drainingContext(delay time.Duration, signals <-chan os.Signal) (context.Context, <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	draining := make(chan struct{})
	go func() {
		<-signals
		close(draining)
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-signals:
		}
		cancel()
	}()
	return ctx, draining
}

// signalContext is drainingContext on SIGTERM and SIGINT.
func signalContext(delay time.Duration) (context.Context, <-chan struct{}) {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, os.Interrupt)
	return drainingContext(delay, signals)
}
