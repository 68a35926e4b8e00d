package misplace

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Reasons of a runtime misplacement (Failure.Reason, and the label of
// isamatch_runtime_misplacements_total).
const (
	// ReasonSIGILL: a container was killed by SIGILL, exit code 132 (128 +
	// signal 4): it executed an instruction its node does not implement.
	ReasonSIGILL = "sigill"
	// ReasonExecFormat: a container could not start, its binary is not
	// for the node's architecture ("exec format error" from the kernel's
	// execve, ENOEXEC). runc (1.2 and later) fails that execve after the
	// container started and says so on the container's stderr only, with
	// exit code 1: the status carries the text when the container's
	// terminationMessagePolicy is FallbackToLogsOnError (the kubelet then
	// copies the log's end into it) or when the runtime failed the start
	// itself (reason StartError). Logs are never read.
	ReasonExecFormat = "exec_format"
)

// sigillExitCode is what containerd reports for a process killed by SIGILL.
const sigillExitCode = 128 + 4

// execFormatError is the kernel's ENOEXEC text, in the runtime's message.
const execFormatError = "exec format error"

// maxMessage bounds the runtime's message kept from a status.
const maxMessage = 256

// Failure is one container that died of its node's ISA.
type Failure struct {
	// Container is the container's name; Init is set for an init
	// container.
	Container string
	Init      bool
	Image     string
	Reason    string
	ExitCode  int32
	// Message is the runtime's message (or the container's termination
	// message), sanitised and cut to maxMessage bytes.
	Message string
}

// Detect returns the containers of pod that died of SIGILL or could not
// start with "exec format error", now or at their last termination, in pod
// order (init containers first).
func Detect(pod *corev1.Pod) []Failure {
	var out []Failure
	images := map[string]string{}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		images[c.Name] = c.Image
	}
	for k, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, s := range statuses {
			reason, code, msg := failure(s)
			if reason == "" {
				continue
			}
			img := images[s.Name]
			if img == "" {
				img = s.Image
			}
			out = append(out, Failure{Container: s.Name, Init: k == 0, Image: img, Reason: reason, ExitCode: code, Message: sanitize.Line(msg, maxMessage)})
		}
	}
	return out
}

// failure reads one container's status: its current state first, then its
// last termination (a container in CrashLoopBackOff waits with the cause in
// its last state).
func failure(s corev1.ContainerStatus) (reason string, code int32, msg string) {
	for _, t := range []*corev1.ContainerStateTerminated{s.State.Terminated, s.LastTerminationState.Terminated} {
		if t == nil {
			continue
		}
		switch {
		case t.ExitCode == sigillExitCode || t.Signal == 4:
			return ReasonSIGILL, t.ExitCode, t.Message
		case strings.Contains(t.Message, execFormatError):
			return ReasonExecFormat, t.ExitCode, t.Message
		}
	}
	if w := s.State.Waiting; w != nil && strings.Contains(w.Message, execFormatError) {
		return ReasonExecFormat, 0, w.Message
	}
	return "", 0, ""
}
