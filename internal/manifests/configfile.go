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
// file, ConfigDirFlag the one naming their drop-in directory.
const (
	ConfigFlag    = "--config="
	ConfigDirFlag = "--config-dir="
)

// MountedConfig returns the file a container's --config names, read from
// the ConfigMap of objs that the pod mounts at its directory (in the pod's
// namespace), and that ConfigMap's name.
func MountedConfig(objs []runtime.Object, namespace string, pod corev1.PodSpec, c corev1.Container) (data, configMap string, err error) {
	file := argValue(c, ConfigFlag)
	if file == "" {
		return "", "", fmt.Errorf("container %s has no %s argument in %q", c.Name, ConfigFlag, c.Args)
	}
	dir, key := path.Split(file)
	cm, err := mountedConfigMap(objs, namespace, pod, c, dir)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", file, err)
	}
	s, ok := cm.Data[key]
	if !ok {
		return "", cm.Name, fmt.Errorf("ConfigMap %s/%s has no key %s", namespace, cm.Name, key)
	}
	return s, cm.Name, nil
}

// MountedConfigDir returns the drop-in files, by name, of the directory a
// container's --config-dir names, read from the ConfigMap of objs that
// the pod mounts there, and that ConfigMap's name.
func MountedConfigDir(objs []runtime.Object, namespace string, pod corev1.PodSpec, c corev1.Container) (files map[string]string, configMap string, err error) {
	dir := argValue(c, ConfigDirFlag)
	if dir == "" {
		return nil, "", fmt.Errorf("container %s has no %s argument in %q", c.Name, ConfigDirFlag, c.Args)
	}
	cm, err := mountedConfigMap(objs, namespace, pod, c, dir)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", dir, err)
	}
	return cm.Data, cm.Name, nil
}

// argValue is the value of the last of c's args that begins with flag, ""
// for none.
func argValue(c corev1.Container, flag string) string {
	var v string
	for _, a := range c.Args {
		if s, ok := strings.CutPrefix(a, flag); ok {
			v = s
		}
	}
	return v
}

// mountedConfigMap is the ConfigMap of objs the pod mounts at dir.
func mountedConfigMap(objs []runtime.Object, namespace string, pod corev1.PodSpec, c corev1.Container, dir string) (*corev1.ConfigMap, error) {
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
			if cm, ok := o.(*corev1.ConfigMap); ok && cm.Name == v.ConfigMap.Name && cm.Namespace == namespace {
				return cm, nil
			}
		}
		return nil, fmt.Errorf("no ConfigMap %s/%s, which volume %s names", namespace, v.ConfigMap.Name, volume)
	}
	return nil, fmt.Errorf("container %s mounts no ConfigMap volume at %s", c.Name, dir)
}

// LocalConfigArgs returns a container's args with --config naming a copy,
// in dir, of the file the pod mounts, and --config-dir (when given) a copy
// of the drop-in directory: the args the binary would run with, for its
// own parser.
func LocalConfigArgs(objs []runtime.Object, namespace string, pod corev1.PodSpec, c corev1.Container, dir string) ([]string, error) {
	data, _, err := MountedConfig(objs, namespace, pod, c)
	if err != nil {
		return nil, err
	}
	local := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(local, []byte(data), 0o600); err != nil {
		return nil, err
	}
	localDir := filepath.Join(dir, "config.d")
	if argValue(c, ConfigDirFlag) != "" {
		files, _, err := MountedConfigDir(objs, namespace, pod, c)
		if err != nil {
			return nil, err
		}
		if err := os.Mkdir(localDir, 0o700); err != nil {
			return nil, err
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(localDir, name), []byte(data), 0o600); err != nil {
				return nil, err
			}
		}
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		switch {
		case strings.HasPrefix(a, ConfigFlag):
			a = ConfigFlag + local
		case strings.HasPrefix(a, ConfigDirFlag):
			a = ConfigDirFlag + localDir
		}
		args[i] = a
	}
	return args, nil
}
