package testbed

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
)

// TestStartOnFreePorts takes the port it was handed before the "process"
// (here a listener) binds it, as another process may, and checks that the
// start is tried again on fresh ports.
func TestStartOnFreePorts(t *testing.T) {
	listen := func(port int) (net.Listener, error) {
		return net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	}
	t.Run("a taken port is retried", func(t *testing.T) {
		attempts := 0
		var got net.Listener
		err := StartOnFreePorts(2, func(ports []int) error {
			attempts++
			if attempts == 1 {
				thief, err := listen(ports[1])
				if err != nil {
					t.Fatalf("take port %d: %v", ports[1], err)
				}
				defer thief.Close()
			}
			l, err := listen(ports[1])
			if err != nil {
				return err
			}
			got = l
			return nil
		})
		if err != nil {
			t.Fatalf("StartOnFreePorts: %v", err)
		}
		defer got.Close()
		if attempts != 2 {
			t.Errorf("attempts = %d, want 2", attempts)
		}
	})
	t.Run("other errors are not retried", func(t *testing.T) {
		attempts := 0
		want := errors.New("bad flag")
		err := StartOnFreePorts(1, func([]int) error { attempts++; return want })
		if !errors.Is(err, want) || attempts != 1 {
			t.Errorf("err = %v after %d attempts, want %v after 1", err, attempts, want)
		}
	})
	t.Run("gives up after three taken ports", func(t *testing.T) {
		attempts := 0
		err := StartOnFreePorts(1, func(ports []int) error {
			attempts++
			thief, err := listen(ports[0])
			if err != nil {
				t.Fatalf("take port %d: %v", ports[0], err)
			}
			defer thief.Close()
			_, err = listen(ports[0])
			return err
		})
		if attempts != 3 || !PortTaken(err) || !strings.Contains(err.Error(), "3 times") {
			t.Errorf("err = %v after %d attempts, want a port-taken error after 3", err, attempts)
		}
	})
}

// TestFreePortAvoidsTheEphemeralRange: a port an outgoing connection may
// take (one from the kernel's ephemeral range) is not handed out while
// ports below that range are free.
func TestFreePortAvoidsTheEphemeralRange(t *testing.T) {
	low, ok := ephemeralLow()
	if !ok || low-stablePortLow < 1000 {
		t.Skipf("no room below the ephemeral range (%s)", ephemeralRangeFile)
	}
	for range 50 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < stablePortLow || port >= low {
			t.Fatalf("FreePort() = %d, want a port in [%d, %d), below the ephemeral range", port, stablePortLow, low)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d from FreePort cannot be bound: %v", port, err)
		}
		l.Close()
	}
}
