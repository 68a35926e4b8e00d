package probe

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain lets the (static) test binary stand in for a host binary inside
// a chroot: run as ".../gcc" it prints what it sees and exits; run as
// ".../print-ids" it prints its user, group and supplementary groups.
func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case "gcc":
		wd, _ := os.Getwd()
		_, markerErr := os.Stat("/chroot-marker")
		fmt.Printf("in chroot: wd=%s marker=%v args=%v\n", wd, markerErr == nil, os.Args[1:])
		os.Exit(0)
	case "print-ids":
		groups, _ := os.Getgroups()
		fmt.Printf("uid=%d euid=%d gid=%d egid=%d groups=%v\n", os.Getuid(), os.Geteuid(), os.Getgid(), os.Getegid(), groups)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
