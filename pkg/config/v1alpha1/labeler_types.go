package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Values of Commands.Exec.
const (
	ExecAuto   = "auto"
	ExecChroot = "chroot"
	ExecDirect = "direct"
)

// LabelerConfiguration configures cmd/labeler, the DaemonSet that labels
// each node with its own ISA. Every field is optional: an absent one keeps
// its default (config.DefaultLabeler in internal/config). The node's name is not here:
// it differs on every node and comes from $NODE_NAME.
type LabelerConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// HostRoot is where the host's / is mounted read-only.
	HostRoot string `json:"hostRoot"`
	// Interval is how often the daemon probes the host again.
	Interval metav1.Duration `json:"interval"`
	// Metrics is the Prometheus endpoint.
	Metrics Metrics `json:"metrics"`
	// Health is the endpoint of /healthz and /readyz.
	Health Health `json:"health"`
	// Commands is how host binaries (gcc) run.
	Commands Commands `json:"commands"`
	// HWProbe asks the running kernel's riscv_hwprobe (linux/riscv64
	// builds only).
	HWProbe bool `json:"hwprobe"`
	// Emulation is the probing of the host's QEMU binfmt_misc handlers.
	Emulation Emulation `json:"emulation"`
}

// Commands is how host binaries run.
type Commands struct {
	// Exec is chroot (into HostRoot, needs CAP_SYS_CHROOT), direct
	// (<hostRoot>/<path> as is) or auto (chroot unless HostRoot is /).
	Exec string `json:"exec"`
	// Timeout of each host command; its process group is killed then.
	Timeout metav1.Duration `json:"timeout"`
	// UID host commands run as when the labeler runs as root; never 0.
	UID uint `json:"uid"`
	// GID host commands run as when the labeler runs as root; never 0.
	GID uint `json:"gid"`
	// MaxOutputBytes a host command may print before it is killed.
	MaxOutputBytes int `json:"maxOutputBytes"`
}

// Emulation is the probing of QEMU binfmt_misc handlers.
type Emulation struct {
	// ProbePrograms is the directory of the probe programs (<arch>/<name>,
	// shipped in the image), an absolute path; "" probes no handler (no
	// emulation labels).
	ProbePrograms string `json:"probePrograms"`
	// Budget bounds probing one handler (every probe program under every
	// QEMU_CPU tried).
	Budget metav1.Duration `json:"budget"`
}
