package isa

// Every label, annotation, gate and image-label key isamatch reads or writes,
// defined once. Other packages import these; none spells a key itself.

// Node label keys with a fixed name. Per-extension labels are
// NativePrefix/EmuPrefix + "<family>.<ext>" (see NodeLabels).
const (
	// ArchLabel is the native architecture (riscv64, riscv32, amd64, arm64).
	ArchLabel = NativePrefix + keyArch
	// GroupLabel is the ISA group: nodes with the same native ISA share it.
	GroupLabel = NativePrefix + keyGroup
	// ExtCountLabel is the number of native extensions.
	ExtCountLabel = NativePrefix + keyExtCount
	// X86LevelLabel is the x86-64 psABI level, numeric so Gt works.
	X86LevelLabel = NativePrefix + keyX86Level
	// GroupDomainPrefix + <GroupID> is a node label that only the nodes of
	// that group carry, valued with the node's own name (GroupDomainLabel):
	// the topology key of the spread constraint the webhook writes, so the
	// scheduler's spreading counts a pod's best-fit group and ignores
	// every other node.
	GroupDomainPrefix = NativePrefix + "group."
	// KubeArchLabel is the kubelet's own architecture label
	// (corev1.LabelArchStable; pkg/isa imports no Kubernetes package).
	KubeArchLabel = "kubernetes.io/arch"
)

// Node annotation keys: what the labeler found and why.
const (
	// NativeISAAnnotation is the node's native ISA, in its short
	// canonical form.
	NativeISAAnnotation = NativePrefix + "isa"
	// NativeSourceAnnotation says which probe decided the native ISA and
	// what the others found.
	NativeSourceAnnotation = NativePrefix + "source"
	// EmuISAAnnotation is what the node emulates or cross-compiles, one
	// short ISA per architecture, comma-separated.
	EmuISAAnnotation = EmuPrefix + "isa"
	// EmuSourceAnnotation says where EmuISAAnnotation came from (cross
	// compiler, QEMU binfmt_misc handlers) and what each gave.
	EmuSourceAnnotation = EmuPrefix + "source"
	// EmuDefaultISAAnnotation is what the QEMU binfmt_misc handlers run
	// with their default CPU (no QEMU_CPU), one short ISA per architecture,
	// comma-separated; EmuISAAnnotation and the qemu. labels are what they
	// run under the recorded QEMU_CPU (QEMUCPUAnnotation).
	EmuDefaultISAAnnotation = EmuPrefix + "default-isa"
	// QEMUCPUAnnotationPrefix + <arch> ("qemu.isamatch.io/cpu.riscv64") is
	// the QEMU_CPU value under which the node's handler for <arch> runs
	// what its qemu. labels say; absent when the default CPU runs it all.
	QEMUCPUAnnotationPrefix = EmuPrefix + "cpu."
)

// EmuExecPrefix + <arch> ("qemu.isamatch.io/binfmt.riscv64=true") is the
// node label saying the node executes <arch> programs through a QEMU
// binfmt_misc handler that the labeler ran its probe programs through: an
// image built for <arch> starts there. The other qemu. labels also count
// what a cross compiler builds, which runs nothing.
const EmuExecPrefix = EmuPrefix + "binfmt."

// EmuExecLabel is the node label saying the node executes a programs
// through QEMU (EmuExecPrefix).
func EmuExecLabel(a Arch) string { return EmuExecPrefix + string(a) }

// QEMUCPUAnnotation is the node annotation holding the QEMU_CPU value of
// the node's QEMU handler for a.
func QEMUCPUAnnotation(a Arch) string { return QEMUCPUAnnotationPrefix + string(a) }

// QEMUCPUEnv is the environment variable QEMU's user-mode emulators read
// their CPU model and properties from; the webhook sets it in the
// containers of a pod it routes to emulation.
const QEMUCPUEnv = "QEMU_CPU"

// Pod keys. The prefixed annotations are the documented spelling; the bare
// ones are the paper's and stay accepted.
const (
	// RequestAnnotation is the ISA the pod needs natively.
	RequestAnnotation = NativePrefix + "request"
	// QEMUAnnotation is the ISA the pod emulates or cross-compiles.
	QEMUAnnotation = NativePrefix + "qemu"
	// BareRequestAnnotation and BareQEMUAnnotation are the paper's spellings.
	BareRequestAnnotation = "isa.request"
	BareQEMUAnnotation    = "isa.qemu"
	// RequestLabel and QEMULabel are the paper's pod labels.
	RequestLabel = "ARCH"
	QEMULabel    = "QEMU"
	// DecisionAnnotation is the webhook's one-line decision, for people.
	DecisionAnnotation = NativePrefix + "decision"
	// DecisionCountsAnnotation is the decision's numbers as compact JSON
	// (contract.DecisionCounts), for programs.
	DecisionCountsAnnotation = NativePrefix + "decision-counts"
	// IgnoreLabel=true on a pod or namespace makes isamatch leave it alone.
	IgnoreLabel = NativePrefix + "ignore"
	// EnabledLabel=true on a namespace opts it in when the webhook runs in
	// opt-in mode.
	EnabledLabel = NativePrefix + "enabled"
	// EnforcementLabel on a namespace chooses what its pods isamatch cannot
	// place correctly get ("deny" or "warn", as the webhook's enforcement),
	// among the modes the webhook lets namespaces choose.
	EnforcementLabel = NativePrefix + "enforcement"
	// ResolveGate is the scheduling gate held while images are resolved.
	ResolveGate = NativePrefix + "resolve"
)

// Image config label keys. The reverse-DNS form is the documented one; the
// bare one is the paper's.
const (
	// ImageRequestLabel is the ISA an image needs, used when the pod asks
	// nothing itself.
	ImageRequestLabel = "io.isamatch.isa.request"
	// BareImageRequestLabel is the paper's spelling of ImageRequestLabel.
	BareImageRequestLabel = "isa.request"
)
