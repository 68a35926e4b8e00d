package manifests

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ConfigFlag is the flag by which the binaries read their configuration
// file.
const ConfigFlag = "--config="

// MountedConfig returns the file a container's --config names, read from
// the ConfigMap of objs that the pod mounts at its directory (in the pod's
// namespace), and that ConfigMap's name.
func MountedConfig(objs []runtime.Object, namespace string, pod corev1.PodSpec, c corev1.Container) (data, configMap string, err error) {
	var file string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, ConfigFlag); ok {
			file = v
		}
	}
	if file == "" {
		return "", "", fmt.Errorf("container %s has no %s argument in %q", c.Name, ConfigFlag, c.Args)
	}
	dir, key := path.Split(file)
	var volume string
	for _, m := range c.VolumeMounts {
		if strings.TrimSuffix(m.MountPath, "/") == strings.TrimSuffix(dir, "/") {
			volume = m.Name
		}
	}
	for _, v := range pod.Volumes {
		if v.Name != volume || v.ConfigMap == nil {
			continue
		}
		for _, o := range objs {
			cm, ok := o.(*corev1.ConfigMap)
			if !ok || cm.Name != v.ConfigMap.Name || cm.Namespace != namespace {
				continue
			}
			s, ok := cm.Data[key]
			if !ok {
				return "", cm.Name, fmt.Errorf("ConfigMap %s/%s has no key %s", namespace, cm.Name, key)
			}
			return s, cm.Name, nil
		}
		return "", "", fmt.Errorf("no ConfigMap %s/%s, which volume %s names", namespace, v.ConfigMap.Name, volume)
	}
	return "", "", fmt.Errorf("container %s mounts no ConfigMap volume at %s, where %s is", c.Name, dir, file)
}

// LocalConfigArgs returns a container's args with --config naming a copy,
// in dir, of the file the pod mounts: the args the binary would run with,
// for its own parser.
func LocalConfigArgs(objs []runtime.Object, namespace string, pod corev1.PodSpec, c corev1.Container, dir string) ([]string, error) {
	data, _, err := MountedConfig(objs, namespace, pod, c)
	if err != nil {
		return nil, err
	}
	local := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(local, []byte(data), 0o600); err != nil {
		return nil, err
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		if strings.HasPrefix(a, ConfigFlag) {
			a = ConfigFlag + local
		}
		args[i] = a
	}
	return args, nil
}
