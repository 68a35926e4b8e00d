// Package main (hack/images) builds isamatch's container images without a
// Docker daemon: it cross-compiles cmd/labeler, cmd/webhook and the
// rebalancer (rebalance/cmd/rebalancer, a module of its own) for each
// platform (CGO_ENABLED=0, -trimpath, -ldflags '-s -w') and assembles, with
// go-containerregistry, one OCI image index per binary on an empty base (the
// binary, /etc/passwd and /etc/group with the nonroot user 65532, and the
// build host's CA bundle). Timestamps are fixed (SOURCE_DATE_EPOCH, else
// 1970), so a rebuild of the same tree gives the same digests.
//
//	go run ./hack/images --repo ghcr.io/you --tag v0.1.0 --push
//	go run ./hack/images --repo ghcr.io/you --tag v0.1.0 --oci-layout _output/oci
//	go run ./hack/images --repo 127.0.0.1:5000/isamatch --tag dev --only labeler --platforms linux/riscv64 --push
//
// The entry point is run: parseArgs reads the flags, buildIndex compiles
// and assembles one image index per App, and publisher.publish pushes it
// (authn.DefaultKeychain) or writes it to an OCI image layout.
package main
