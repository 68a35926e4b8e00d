package misplace

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runcExecFormat is the message the kubelet reports for a binary of another
// architecture under containerd and runc (test/node sees it for real).
const runcExecFormat = `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: "/app": exec format error: unknown`

func terminated(code, signal int32, reason, msg string) *corev1.ContainerStateTerminated {
	return &corev1.ContainerStateTerminated{ExitCode: code, Signal: signal, Reason: reason, Message: msg}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name     string
		init     []corev1.ContainerStatus
		statuses []corev1.ContainerStatus
		want     []Failure
	}{
		{name: "running", statuses: []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
		{name: "SIGILL now", statuses: []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Terminated: terminated(132, 0, "Error", "")}}},
			want: []Failure{{Container: "app", Image: "reg/app:v1", Reason: ReasonSIGILL, ExitCode: 132}}},
		{name: "SIGILL as a signal", statuses: []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Terminated: terminated(0, 4, "Error", "")}}},
			want: []Failure{{Container: "app", Image: "reg/app:v1", Reason: ReasonSIGILL}}},
		{name: "SIGILL in the last state, crash looping", statuses: []corev1.ContainerStatus{{Name: "app",
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container"}},
			LastTerminationState: corev1.ContainerState{Terminated: terminated(132, 0, "Error", "")}}},
			want: []Failure{{Container: "app", Image: "reg/app:v1", Reason: ReasonSIGILL, ExitCode: 132}}},
		{name: "exec format error at start", statuses: []corev1.ContainerStatus{{Name: "app",
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: terminated(128, 0, "StartError", runcExecFormat)}}},
			want: []Failure{{Container: "app", Image: "reg/app:v1", Reason: ReasonExecFormat, ExitCode: 128, Message: runcExecFormat}}},
		{name: "exec format error in the log's end (runc 1.2+, FallbackToLogsOnError)", statuses: []corev1.ContainerStatus{{Name: "app",
			LastTerminationState: corev1.ContainerState{Terminated: terminated(1, 0, "Error", "exec /pause: exec format error\n")}}},
			want: []Failure{{Container: "app", Image: "reg/app:v1", Reason: ReasonExecFormat, ExitCode: 1, Message: "exec /pause: exec format error"}}},
		{name: "exit 1 without a message is not a misplacement", statuses: []corev1.ContainerStatus{{Name: "app",
			LastTerminationState: corev1.ContainerState{Terminated: terminated(1, 0, "Error", "")}}}},
		{name: "exec format error while waiting", init: []corev1.ContainerStatus{{Name: "setup",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "RunContainerError", Message: "exec format error"}}}},
			want: []Failure{{Container: "setup", Init: true, Image: "reg/setup:v1", Reason: ReasonExecFormat, Message: "exec format error"}}},
		{name: "other failures are not misplacements", statuses: []corev1.ContainerStatus{
			{Name: "app", State: corev1.ContainerState{Terminated: terminated(1, 0, "Error", "")}},
			{Name: "side", State: corev1.ContainerState{Terminated: terminated(137, 9, "OOMKilled", "")}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
			pod.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "reg/setup:v1"}}
			pod.Spec.Containers = []corev1.Container{{Name: "app", Image: "reg/app:v1"}, {Name: "side", Image: "reg/side:v1"}}
			pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses = tc.init, tc.statuses
			if diff := cmp.Diff(tc.want, Detect(pod)); diff != "" {
				t.Errorf("Detect (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDetectSanitisesTheMessage(t *testing.T) {
	pod := &corev1.Pod{}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{
		Terminated: terminated(132, 0, "Error", "\x1b[31mboom"+strings.Repeat("x", 1000))}}}
	got := Detect(pod)
	if len(got) != 1 || strings.ContainsRune(got[0].Message, 0x1b) || len(got[0].Message) > maxMessage+len("…") {
		t.Errorf("Detect kept %+v", got)
	}
}
