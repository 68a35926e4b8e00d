package main

import (
	corev1 "k8s.io/api/core/v1"
)

// What TestConfigRenders checks the rendered pods with.

// selects: the selector is not empty and every key of it matches labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func mountsSecret(pod corev1.PodSpec, c corev1.Container, secret, dir string) bool {
	for _, v := range pod.Volumes {
		if v.Secret == nil || v.Secret.SecretName != secret {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name && m.MountPath == dir {
				return true
			}
		}
	}
	return false
}

// labelerMountsNarrow: no hostPath volume of "/", and every hostPath mount
// read-only, directories with recursiveReadOnly Enabled.
func labelerMountsNarrow(pod corev1.PodSpec) bool {
	host := map[string]*corev1.HostPathVolumeSource{}
	for _, v := range pod.Volumes {
		if v.HostPath != nil {
			if v.HostPath.Path == "/" {
				return false
			}
			host[v.Name] = v.HostPath
		}
	}
	for _, c := range pod.Containers {
		for _, m := range c.VolumeMounts {
			hp, ok := host[m.Name]
			if !ok {
				continue
			}
			if !m.ReadOnly {
				return false
			}
			isFile := hp.Type != nil && *hp.Type == corev1.HostPathFile
			if !isFile && (m.RecursiveReadOnly == nil || *m.RecursiveReadOnly != corev1.RecursiveReadOnlyEnabled) {
				return false
			}
		}
	}
	return len(host) > 0
}
