package labeler

import (
	"context"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/probe"
)

// reportEmulation says what the node emulates, and why QEMU handlers it
// has give no emulation labels, whenever that changes (and on the first
// pass): a log line always, and a Warning Event on the node when a handler
// is there but cannot be used (disabled, no F flag, nothing ran). A node
// without binfmt_misc or QEMU handlers gets the log line only: most nodes
// emulate nothing, and that is no warning.
func (c *Controller) reportEmulation(ctx context.Context, prev *probe.Result, res probe.Result) {
	if prev != nil && slices.Equal(prev.EmuProblems, res.EmuProblems) &&
		emulatedShort(prev.Emulated) == emulatedShort(res.Emulated) && maps.Equal(prev.QEMUCPU, res.QEMUCPU) {
		return
	}
	log := ctrl.LoggerFrom(ctx).WithValues("node", c.NodeName)
	qemuCPU := map[string]string{}
	for a, v := range res.QEMUCPU {
		qemuCPU[string(a)] = v
	}
	log.Info("emulation probed", "emulated", emulatedShort(res.Emulated), "qemuCPU", qemuCPU,
		"problems", res.EmuProblems, "source", res.EmuSource)
	if len(res.EmuProblems) > 0 && c.Recorder != nil {
		c.Recorder.Eventf(nodeRef(c.NodeName), nil, corev1.EventTypeWarning, ReasonEmulationUnavailable, "Probe",
			"%s", truncate(strings.Join(res.EmuProblems, "; "), maxNote))
	}
}

// emulatedShort is the emulated ISAs' short forms, comma-separated.
func emulatedShort(emulated []isa.ISA) string {
	out := make([]string, len(emulated))
	for i, e := range emulated {
		out[i] = e.Short()
	}
	return strings.Join(out, ",")
}
