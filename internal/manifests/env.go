package manifests

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ResolvedEnv returns, as NAME=VALUE, the variables of container c that
// the kubelet would give it from the manifest alone: those with a value
// and those from c's own resources (resourceFieldRef, requests and limits
// of cpu and memory). The others (a pod field, a Secret, a ConfigMap) are
// left out. A resource the manifest does not set resolves as the API
// server's defaults and the kubelet would: an unset request to the limit,
// else to 0; an unset limit is an error (the kubelet gives the node's
// allocatable, which a manifest does not know).
func ResolvedEnv(c corev1.Container) ([]string, error) {
	var env []string
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.ResourceFieldRef != nil:
			v, err := resourceValue(c, e.ValueFrom.ResourceFieldRef)
			if err != nil {
				return nil, fmt.Errorf("container %s, env %s: %w", c.Name, e.Name, err)
			}
			env = append(env, e.Name+"="+v)
		}
	}
	return env, nil
}

// resourceValue is the kubelet's value of ref in c: the quantity over the
// divisor, rounded up (cpu in cores unless the divisor says otherwise).
func resourceValue(c corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	if ref.ContainerName != "" && ref.ContainerName != c.Name {
		return "", fmt.Errorf("resourceFieldRef of container %q: only the container's own resources resolve here", ref.ContainerName)
	}
	var name corev1.ResourceName
	var limit bool
	switch ref.Resource {
	case "requests.cpu":
		name = corev1.ResourceCPU
	case "requests.memory":
		name = corev1.ResourceMemory
	case "limits.cpu":
		name, limit = corev1.ResourceCPU, true
	case "limits.memory":
		name, limit = corev1.ResourceMemory, true
	default:
		return "", fmt.Errorf("resourceFieldRef %q: only requests and limits of cpu and memory resolve here", ref.Resource)
	}
	q, ok := c.Resources.Limits[name]
	if !limit {
		if r, set := c.Resources.Requests[name]; set {
			q, ok = r, true
		} else if !ok {
			q, ok = resource.Quantity{}, true
		}
	}
	if !ok {
		return "", fmt.Errorf("resourceFieldRef %q: the container sets no %s limit (the kubelet would give the node's allocatable)", ref.Resource, name)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if name == corev1.ResourceCPU {
		return fmt.Sprint(int64(math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue())))), nil
	}
	return fmt.Sprint(int64(math.Ceil(float64(q.Value()) / float64(divisor.Value())))), nil
}
