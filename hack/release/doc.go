// Package main (hack/release) publishes a release of isamatch from the OCI
// image layout that hack/images writes (go run ./hack/images --oci-layout):
//
//	go run ./hack/images --repo REPO --tag VERSION --oci-layout _output/release/oci
//	go -C hack/release run . --repo REPO --version VERSION --oci-layout ../../_output/release/oci --dist ../../dist
//
// (make release VERSION=... REPO=... runs both.) For each image index in the
// layout it pushes the index by digest and tags it VERSION, reads the Go
// build information of the binary in every platform's image and writes an
// SPDX 2.3 SBOM of it (spdx/tools-golang), pushes the SBOM as an OCI
// artifact whose subject is the index (a referrer: the Referrers API, or
// its tag fallback on registries without it), pushes the chart with the
// images pinned to REPO/charts/isamatch:<version> (Helm's registry client),
// and writes dist/:
//
//	dist/install.yaml                    what `kubectl apply -k config` installs, images by digest
//	dist/config/                         config/ with every image pinned by digest (components included)
//	dist/isamatch-<version>.tgz          the Helm chart, images pinned by digest
//	dist/images.txt                      each image: reference, index digest, platform digests; the chart's oci:// reference
//	dist/sbom/<image>.spdx.json          the SBOMs pushed as referrers
//	dist/SHA256SUMS                      sha256sum -c of every file above
//
// The entry point is run; publish pushes, sbomFor writes an SBOM, and
// writeDist writes dist/.
package main
