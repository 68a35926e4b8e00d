// Package bench measures what isamatch costs a cluster, side by side with
// the same cluster without it, and prints one table. Its entry
// point is [Run], which cmd/bench (`make bench`) calls.
//
// Every figure is the median of Options.Runs repetitions and every
// comparison a ratio against a baseline measured in the same run: the
// machines this runs on are shared and noisy. The cluster is a real
// kube-apiserver, etcd and kube-scheduler (test/framework), the real
// webhook binary behind the shipped MutatingWebhookConfiguration, the Debian
// docker-registry behind a counting reverse proxy ([CountingProxy]), and
// simulated Ready nodes labelled as the labeler would label them.
package bench
