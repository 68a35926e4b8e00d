// Package memlimit sets a binary's Go soft memory limit from its
// container's memory request (RequestEnv), which a Deployment passes by
// the downward API.
package memlimit

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
)

// RequestEnv names the variable the Deployment sets to the
// container's memory request in bytes (downward API, requests.memory).
//
// The webhook makes it the Go runtime's soft memory limit: the collector
// runs sooner as the process nears what the scheduler reserved for it,
// instead of letting the heap grow to twice what is live (GOGC=100) and
// keeping what it freed. The container's memory limit, above the request,
// stays the hard ceiling: when more than the request is live, the
// runtime lets the heap pass it rather than collect without end (it gives
// the collector at most half the CPU).
const RequestEnv = "ISAMATCH_MEMORY_REQUEST"

// minTarget is the least request taken as a soft limit: below it the
// collector would run nearly all the time (the webhook holds some 10 MiB
// live when idle), so a smaller request is not applied and the runtime
// keeps its defaults.
const minTarget = 32 << 20

// Target is the soft memory limit getenv asks for, or 0 when the
// runtime's own settings stand: GOMEMLIMIT is set (the runtime has read
// it), or RequestEnv is unset or 0 (a container without a memory
// request). A value that is not a whole number of bytes of at least
// minTarget is an error that names it.
func Target(getenv func(string) string) (int64, error) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	s := strings.TrimSpace(getenv(RequestEnv))
	if s == "" || s == "0" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want the container's memory request in bytes (resourceFieldRef requests.memory, divisor 1)", RequestEnv, s)
	}
	if n < minTarget {
		return 0, fmt.Errorf("%s=%d: a memory request under %d MiB leaves the Go collector no room; raise the webhook's requests.memory (112Mi covers 5,000 nodes and 100,000 pods)", RequestEnv, n, minTarget>>20)
	}
	return n, nil
}

// Apply sets the soft memory limit Target gives, and
// returns it (0: left as the runtime has it). On an error nothing is set:
// the caller logs it and the webhook runs with the runtime's defaults.
func Apply(getenv func(string) string) (int64, error) {
	n, err := Target(getenv)
	if err != nil || n == 0 {
		return 0, err
	}
	debug.SetMemoryLimit(n)
	return n, nil
}
