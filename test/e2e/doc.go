// Package e2e is the end-to-end suite of isamatch: the whole system as real
// processes (kube-apiserver, etcd and the stock kube-scheduler; the labeler
// binary per simulated node; the webhook binary; Debian's docker-registry),
// brought up by internal/democluster.
//
// It reproduces the ISAMatch paper's experiment on the paper's cluster (each
// scenario without and with isamatch, through internal/experiment), checks
// the paper's QEMU flow, runs experiment 2 again with images that declare
// nothing but an entrypoint built by the RISC-V cross compiler (the webhook
// in gate mode reads its ELF attributes), and goes beyond the paper with a seeded randomized
// cluster of 60 nodes and 1,000 pods judged by internal/oracle from each
// node's host root, the pods' requests and the images' platforms.
//
//	export KUBEBUILDER_ASSETS="$(hack/controlplane.sh)"
//	go test ./test/e2e -v -args -ginkgo.v
//
// The suite skips when docker-registry is not installed, except with CI=true.
package e2e
