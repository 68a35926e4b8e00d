package main

import (
	"flag"
	"os"

	"github.com/isamatch/isamatch/internal/configflag"
	"github.com/isamatch/isamatch/internal/logging"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
)

// registerOwn registers the flags that are not in the configuration file:
// the file itself, the node (each its own), the modes, the kubeconfig,
// logging and --version.
func (o *options) registerOwn(fs *flag.FlagSet) {
	fs.StringVar(&o.configFile, "config", "", "the LabelerConfiguration file (config.isamatch.io/v1alpha1, docs/configuration.md); flags given on the command line override its fields")
	fs.StringVar(&o.configDir, "config-dir", "", "a directory of drop-in LabelerConfiguration files (*.yaml, *.yml, *.json), each read in name order over --config and the ones before it: the fields a drop-in names replace theirs (a list whole), as the kubelet's --config-dir; flags given on the command line override them all")
	fs.StringVar(&o.nodeName, "node-name", os.Getenv("NODE_NAME"), "name of the Node to label (default $NODE_NAME)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)")
	fs.BoolVar(&o.once, "once", false, "probe, reconcile the node once and exit")
	fs.BoolVar(&o.print, "print", false, "probe only and print the labels it would set, key=value sorted (the group's domain label only with --node-name or NODE_NAME); no cluster access")
	fs.IntVar(&o.verbosity, "v", 0, "log verbosity (0 or 1)")
	fs.StringVar(&o.logFormat, "log-format", logging.FormatText, logging.FlagUsage)
	fs.BoolVar(&o.version, "version", false, "print the version, VCS revision and Go version, and exit")
	fs.BoolVar(&o.prune, "prune", false, "remove every isa.isamatch.io/ and qemu.isamatch.io/ label and annotation from every node and release every pod held by the scheduling gate isa.isamatch.io/resolve, then exit (uninstall; needs list and patch on nodes and pods, and the isamatch-node-labels policy gone or cluster-admin rights)")
}

// bindFlags registers the deprecated flags, each bound to its field of c
// with c's value as its default.
func bindFlags(f *configflag.Flags, c *v1alpha1.LabelerConfiguration) {
	f.String(&c.HostRoot, "host-root", "hostRoot", "the host's / mounted read-only")
	f.Duration(&c.Interval, "interval", "interval", "how often the daemon re-probes the host")
	f.String(&c.Metrics.BindAddress, "metrics-bind-address", "metrics.bindAddress", `metrics endpoint address ("0" disables)`)
	f.String(&c.Metrics.TokenAudience, "metrics-token-audience", "metrics.tokenAudience", "audience a scraper's bearer token must be issued for (a ServiceAccount token projected for it): an API-server token is refused, so a node owner cannot harvest one from the scraper")
	f.Bool(&c.Metrics.Secure, "metrics-secure", "metrics.secure", "serve metrics over HTTPS to callers whose token the API server authenticates and authorises for GET /metrics (false: plain HTTP to anyone, for local runs)")
	f.String(&c.Health.BindAddress, "health-probe-bind-address", "health.bindAddress", `healthz/readyz address ("0" disables)`)
	cmd := &c.Commands
	f.String(&cmd.Exec, "exec", "commands.exec", "how host binaries run: chroot (into --host-root, needs CAP_SYS_CHROOT), direct (<host-root>/<path> as is), auto (chroot unless --host-root is /)")
	f.Duration(&cmd.Timeout, "command-timeout", "commands.timeout", "timeout of each host command (gcc); its whole process group is killed then")
	f.Uint(&cmd.UID, "exec-uid", "commands.uid", "UID host commands run as when the labeler runs as root (needs CAP_SETUID); never 0")
	f.Uint(&cmd.GID, "exec-gid", "commands.gid", "GID host commands run as when the labeler runs as root (needs CAP_SETGID); never 0")
	f.Int(&cmd.MaxOutputBytes, "command-max-output", "commands.maxOutputBytes", "bytes a host command may print before it is killed")
	f.Bool(&c.HWProbe, "hwprobe", "hwprobe", "ask the running kernel's riscv_hwprobe (linux/riscv64 builds only)")
	f.String(&c.Emulation.ProbePrograms, "probe-programs", "emulation.probePrograms", `directory of the probe programs (<arch>/<name>, shipped in the image) run through the host's QEMU binfmt_misc handlers, as --exec-uid, with --command-timeout each; "" probes no handler (no emulation labels)`)
	f.Duration(&c.Emulation.Budget, "emulation-budget", "emulation.budget", "bound on probing one QEMU binfmt_misc handler (every probe program under every QEMU_CPU tried); results are remembered per interpreter file")
}

// setConfig copies a validated configuration into o.
func (o *options) setConfig(c *v1alpha1.LabelerConfiguration) {
	o.hostRoot, o.interval, o.hwprobe = c.HostRoot, c.Interval.Duration, c.HWProbe
	o.metricsAddr, o.metricsSecure, o.metricsAud, o.healthAddr = c.Metrics.BindAddress, c.Metrics.Secure, c.Metrics.TokenAudience, c.Health.BindAddress
	o.execMode, o.commandTimeout, o.execUID, o.execGID, o.maxOutput = c.Commands.Exec, c.Commands.Timeout.Duration, c.Commands.UID, c.Commands.GID, c.Commands.MaxOutputBytes
	o.probePrograms, o.emuBudget = c.Emulation.ProbePrograms, c.Emulation.Budget.Duration
}
