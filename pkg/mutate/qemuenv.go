package mutate

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// QEMU_CPU in the containers of a pod with isa.qemu: the engine chooses
// the setting (engine.ChooseEmulator), the adapter writes it.

// applyEmulator sets s.QEMUCPU in every container and init container of
// pod that does not set QEMU_CPU itself, and records which. A container
// whose QEMU_CPU already is s.QEMUCPU counts as set: admitting a pod again
// changes nothing.
func applyEmulator(pod *podFields, s *contract.EmulatorSetting) {
	if s == nil || s.QEMUCPU == "" {
		return
	}
	for _, list := range []*[]containerImage{&pod.Spec.InitContainers, &pod.Spec.Containers} {
		for k := range *list {
			c := &(*list)[k]
			i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == isa.QEMUCPUEnv })
			switch {
			case i < 0:
				c.Env = append(c.Env, corev1.EnvVar{Name: isa.QEMUCPUEnv, Value: s.QEMUCPU})
			case c.Env[i].Value != s.QEMUCPU || c.Env[i].ValueFrom != nil:
				s.Own = append(s.Own, c.Name)
				continue
			}
			// Set now, or by an earlier admission of the same pod (a
			// reinvocation): the same setting either way.
			s.Set = append(s.Set, c.Name)
		}
	}
	if len(s.Set) == 0 {
		s.QEMUCPU, s.Reason = "", engine.EmulatorOwn
	}
}

// recordEmulator applies d's emulator setting to pod's containers and adds
// it to the decision: its clause to the line, itself to the counts.
func recordEmulator(pod *podFields, d *engine.Decision) {
	if d.Emulator == nil {
		return
	}
	applyEmulator(pod, d.Emulator)
	d.Summary += "; " + engine.EmulatorClause(*d.Emulator)
	d.Counts.Emulator = d.Emulator
}

// keepEmulator carries the emulator setting admission recorded on pod into
// the decision the gate controller writes at its release: the containers'
// environment cannot change after admission, so neither does the setting.
func keepEmulator(pod *corev1.Pod, d *engine.Decision) {
	prev, err := contract.ParseDecision(pod.Annotations)
	if err != nil || prev.Emulator == nil {
		return
	}
	d.Counts.Emulator = prev.Emulator
	d.Summary += "; " + engine.EmulatorClause(*prev.Emulator)
}
