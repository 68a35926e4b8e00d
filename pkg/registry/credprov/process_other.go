//go:build !unix

package credprov

import "os/exec"

// killProcessGroup leaves cmd as it is: without process groups only the
// plugin itself is killed on cancellation.
func killProcessGroup(*exec.Cmd) {}

// killGroupAfterExit does nothing without process groups.
func killGroupAfterExit(*exec.Cmd) {}
