// Command plugin builds the kubectl plugin's release files: one archive
// per platform of its krew manifest template (kubectl-isa_OS_ARCH.tar.gz,
// .zip for Windows, holding kubectl-isa and LICENSE), and the krew
// manifest rendered with their digests (kubectl-isa.krew.yaml), as
// krew-release-bot renders it for krew-index. `make release` runs it and
// hack/release copies its files into dist/.
//
//	go run ./hack/plugin --version v0.1.0 --out _output/release/plugin [--platforms linux/amd64,...]
//
// The archives are reproducible: static, -trimpath builds with the
// version linked in, every timestamp SOURCE_DATE_EPOCH (else 1970-01-01).
package main
