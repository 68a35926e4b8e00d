// Package buildinfo says which build a binary is: its version, VCS
// revision and Go version. The entry point is [Read]; [Info.Collector] is
// the isamatch_build_info gauge both binaries register.
//
// A release build sets the version and revision with
//
//	-ldflags "-X github.com/isamatch/isamatch/internal/buildinfo.version=v0.1.0
//	          -X github.com/isamatch/isamatch/internal/buildinfo.revision=<commit>"
//
// (hack/images does). Without them, what the Go toolchain recorded is used:
// the module version and vcs.revision of a build inside a git checkout.
package buildinfo
