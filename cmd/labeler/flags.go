package main

import (
	"flag"
	"os"

	"github.com/isamatch/isamatch/internal/logging"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

// registerOwn registers the flags that are not in the configuration file:
// the file itself, the node (each its own), the modes, the kubeconfig,
// logging and --version.
func (o *options) registerOwn(fs *flag.FlagSet) {
	fs.StringVar(&o.configFile, "config", "", "the LabelerConfiguration file (config.isamatch.io/v1alpha1, docs/configuration.md): every setting but the flags here")
	fs.StringVar(&o.configDir, "config-dir", "", "a directory of drop-in LabelerConfiguration files (*.yaml, *.yml, *.json), each read in name order over --config and the ones before it: the fields a drop-in names replace theirs (a list whole), as the kubelet's --config-dir")
	fs.StringVar(&o.nodeName, "node-name", os.Getenv("NODE_NAME"), "name of the Node to label (default $NODE_NAME)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)")
	fs.BoolVar(&o.once, "once", false, "probe, reconcile the node once and exit")
	fs.BoolVar(&o.print, "print", false, "probe only and print the labels it would set, key=value sorted (the group's domain label only with --node-name or NODE_NAME); no cluster access")
	fs.IntVar(&o.verbosity, "v", 0, "log verbosity (0 or 1)")
	fs.StringVar(&o.logFormat, "log-format", logging.FormatText, logging.FlagUsage)
	fs.BoolVar(&o.version, "version", false, "print the version, VCS revision and Go version, and exit")
	fs.BoolVar(&o.prune, "prune", false, "remove every isa.isamatch.io/ and qemu.isamatch.io/ label and annotation from every node and release every pod held by the scheduling gate isa.isamatch.io/resolve, then exit (uninstall; needs list and patch on nodes and pods, and the isamatch-node-labels policy gone or cluster-admin rights)")
}

// setConfig copies a validated configuration into o.
func (o *options) setConfig(c *v1alpha1.LabelerConfiguration) {
	o.hostRoot, o.interval, o.hwprobe = c.HostRoot, c.Interval.Duration, c.HWProbe
	o.metricsAddr, o.metricsSecure, o.metricsAud, o.healthAddr = c.Metrics.BindAddress, c.Metrics.Secure, c.Metrics.TokenAudience, c.Health.BindAddress
	o.execMode, o.commandTimeout, o.execUID, o.execGID, o.maxOutput = c.Commands.Exec, c.Commands.Timeout.Duration, c.Commands.UID, c.Commands.GID, c.Commands.MaxOutputBytes
	o.probePrograms, o.emuBudget = c.Emulation.ProbePrograms, c.Emulation.Budget.Duration
}
