package manifests

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestResolvedEnv(t *testing.T) {
	ref := func(res, divisor string) *corev1.EnvVarSource {
		s := &corev1.ResourceFieldSelector{Resource: res}
		if divisor != "" {
			s.Divisor = resource.MustParse(divisor)
		}
		return &corev1.EnvVarSource{ResourceFieldRef: s}
	}
	c := corev1.Container{
		Name: "webhook",
		Env: []corev1.EnvVar{
			{Name: "PLAIN", Value: "x"},
			{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			{Name: "REQ", ValueFrom: ref("requests.memory", "1")},
			{Name: "LIM_MI", ValueFrom: ref("limits.memory", "1Mi")},
			{Name: "CPU_M", ValueFrom: ref("requests.cpu", "1m")},
			{Name: "CPU", ValueFrom: ref("requests.cpu", "")},
			{Name: "CPU_LIM", ValueFrom: ref("limits.cpu", "")},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi"), corev1.ResourceCPU: resource.MustParse("100m")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi"), corev1.ResourceCPU: resource.MustParse("1500m")},
		},
	}
	got, err := ResolvedEnv(c)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"PLAIN=x", "REQ=134217728", "LIM_MI=256", "CPU_M=100", "CPU=1", "CPU_LIM=2"}
	if !slices.Equal(got, want) {
		t.Errorf("ResolvedEnv() = %q, want %q", got, want)
	}

	// An unset request is the limit (the API server's default), else 0.
	c.Resources.Requests = nil
	c.Env = []corev1.EnvVar{{Name: "REQ", ValueFrom: ref("requests.memory", "")}}
	if got, err := ResolvedEnv(c); err != nil || !slices.Equal(got, []string{"REQ=268435456"}) {
		t.Errorf("request unset, limit set: ResolvedEnv() = %q, %v, want [REQ=268435456]", got, err)
	}
	c.Resources.Limits = nil
	if got, err := ResolvedEnv(c); err != nil || !slices.Equal(got, []string{"REQ=0"}) {
		t.Errorf("neither set: ResolvedEnv() = %q, %v, want [REQ=0]", got, err)
	}

	for _, tc := range []struct {
		env  corev1.EnvVar
		want string
	}{
		{corev1.EnvVar{Name: "LIM", ValueFrom: ref("limits.memory", "")}, `container webhook, env LIM: resourceFieldRef "limits.memory": the container sets no memory limit`},
		{corev1.EnvVar{Name: "EPH", ValueFrom: ref("requests.ephemeral-storage", "")}, `resourceFieldRef "requests.ephemeral-storage": only requests and limits of cpu and memory`},
		{corev1.EnvVar{Name: "OTHER", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "sidecar", Resource: "requests.memory"}}}, `resourceFieldRef of container "sidecar"`},
	} {
		c.Env = []corev1.EnvVar{tc.env}
		if _, err := ResolvedEnv(c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ResolvedEnv() error = %v, want one containing %q", tc.env.Name, err, tc.want)
		}
	}
}
