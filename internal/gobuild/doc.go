// Package gobuild builds the project's binaries the one way every build
// of them goes: the suites, the demo, the bench and the release images
// (hack/images) alike, stripped, with the version linked in, and as the
// images are built (static, at each architecture's baseline ISA) when
// asked. It is not part of the test harness, so the release build does
// not import it.
package gobuild
