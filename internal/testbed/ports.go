package testbed

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// ephemeralRangeFile holds the kernel's range for the local ports of
// outgoing connections and of listeners on port 0.
const ephemeralRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// Ports below the ephemeral range that FreePort picks from: above the
// well-known and most registered service ports.
const (
	stablePortLow   = 20000
	stablePortTries = 64
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
//
// It picks below the kernel's ephemeral range where it can: a port from
// that range can be taken between the pick and a child binding it by any
// outgoing connection on the machine (a client of the API server, a
// registry pull), and such a connection can hold it for minutes, so trying
// again later does not help a port that must stay fixed (one written into
// a configuration before the process starts). Other processes picking
// ports the same way can still collide: start processes with
// StartOnFreePorts.
func FreePort() (int, error) {
	if low, ok := ephemeralLow(); ok && low-stablePortLow >= 1000 {
		for range stablePortTries {
			port := stablePortLow + rand.IntN(low-stablePortLow) //nolint:gosec // spreading test ports, not a secret
			if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
				l.Close()
				return port, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralLow returns the first port of the kernel's ephemeral range.
func ephemeralLow() (int, bool) {
	b, err := os.ReadFile(ephemeralRangeFile)
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return 0, false
	}
	low, err := strconv.Atoi(fields[0])
	return low, err == nil
}

// portAttempts is how often StartOnFreePorts tries.
const portAttempts = 3

// StartOnFreePorts calls start with n ports from FreePort. When start fails
// because a port was taken in the meantime (PortTaken), it tries again
// with fresh ports, up to three times. start must stop what it started
// before it returns such an error.
func StartOnFreePorts(n int, start func(ports []int) error) error {
	var err error
	for range portAttempts {
		ports := make([]int, n)
		for i := range ports {
			if ports[i], err = FreePort(); err != nil {
				return err
			}
		}
		if err = start(ports); !PortTaken(err) {
			return err
		}
	}
	return fmt.Errorf("ports were taken by other processes %d times: %w", portAttempts, err)
}

// PortTaken reports whether a process failed to start because a port it
// was given is in use (its log tail, in err, says so).
func PortTaken(err error) bool {
	return err != nil && strings.Contains(err.Error(), "address already in use")
}
