// Package restconfig loads the API server client configuration of
// isamatch's daemons (the webhook and the labeler).
package restconfig

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
)

// Load reads kubeconfig, or without one finds the configuration as
// controller-runtime does (--kubeconfig, $KUBECONFIG, in-cluster, then
// ~/.kube/config).
//
// Responses come uncompressed, as kube-scheduler and
// kube-controller-manager ask for theirs: the daemons run next to the API
// server, where gzip costs CPU on both sides and saves nothing worth it.
// The API server (v1.37 measured) gzips watch streams too, for a client
// that accepts gzip, flushing each event: the webhook's pod watch would
// otherwise cost the API server a compression of every pod written in the
// cluster, and the webhook its decompression.
func Load(kubeconfig string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		if cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
			return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
		}
	} else if cfg, err = config.GetConfig(); err != nil {
		return nil, fmt.Errorf("find cluster config (pass --kubeconfig outside a pod): %w", err)
	}
	cfg.DisableCompression = true
	return cfg, nil
}
