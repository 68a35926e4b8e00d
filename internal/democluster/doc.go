// Package democluster brings up the whole isamatch system on one machine for
// cmd/demo and the end-to-end suite: a real kube-apiserver, etcd and
// kube-scheduler (internal/testbed), Debian's docker-registry holding the
// experiment images, simulated Ready nodes labelled by the real labeler
// binary probing a host root per node, and the real webhook binary serving
// HTTPS behind a MutatingWebhookConfiguration.
//
// The entry point is [Start]; [Cluster.Stop] tears everything down.
// [Cluster.Runner] returns an experiment.Runner whose namespaces get the
// registry's pull secret on their default ServiceAccount, as a real cluster
// would have it.
//
// The steps are exported for internal/bench, which assembles its own
// cluster (nodes labelled directly, a counting proxy before the registry):
// [StartControlPlane], [StartRegistry], [StartWebhook], [SetUpNamespace]
// and [WaitDecisionCount].
package democluster
