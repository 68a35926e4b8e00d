// Package webhook is the integration suite of the isamatch webhook: a real
// kube-apiserver and etcd (envtest) with the shipped
// MutatingWebhookConfiguration installed, the cmd/webhook binary serving it,
// and Debian's docker-registry (TLS and htpasswd) holding the images. Pods
// are created through the API server with pull secrets. Run it with
// KUBEBUILDER_ASSETS set (see hack/controlplane.sh); the entry point is
// TestWebhook.
package webhook
