package probe

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain lets the (static) test binary stand in for a host gcc inside a
// chroot: run as ".../gcc" it prints what it sees and exits.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "gcc" {
		wd, _ := os.Getwd()
		_, markerErr := os.Stat("/chroot-marker")
		fmt.Printf("in chroot: wd=%s marker=%v args=%v\n", wd, markerErr == nil, os.Args[1:])
		os.Exit(0)
	}
	os.Exit(m.Run())
}
