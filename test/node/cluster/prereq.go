package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// CNIBinDir is where Debian's containernetworking-plugins installs the
// plugins.
const CNIBinDir = "/usr/lib/cni"

// NodePackages are the Debian packages a node needs beside the binaries
// `hack/controlplane.sh node` builds; `hack/deps.sh node` installs them.
var NodePackages = []string{"runc", "containernetworking-plugins", "iptables", "conntrack", "qemu-user-static"}

// Missing is a prerequisite that `hack/deps.sh node` or
// `hack/controlplane.sh node` provides: under CI its absence is a failure.
type Missing struct{ What, Fix string }

func (m *Missing) Error() string { return m.What + ": " + m.Fix }

// Unsupported is a property of the machine (no root, no overlayfs, ...)
// that no script can fix: the suite skips what needs it.
type Unsupported struct{ What string }

func (u *Unsupported) Error() string { return u.What }

// Host is what Check found out about this machine.
type Host struct {
	// CgroupV1 is true when /sys/fs/cgroup is not a cgroup v2 mount (v1 or
	// hybrid): the kubelet then needs failCgroupV1: false.
	CgroupV1 bool
	// Overlay is true when the kernel has overlayfs; the snapshotter is
	// then overlayfs, else native (slower, copies every layer).
	Overlay bool
	// NodeIP is the address of the interface of the default route: the API
	// server advertises it, the registry listens on it, pods reach both.
	NodeIP string
	// NodeName is the name the kubelet registers: the host name, lowercased.
	NodeName string
	// Runc is the runc binary.
	Runc string
	// NoSysResource is true when this process lacks CAP_SYS_RESOURCE (some
	// VMs and containers drop it from the bounding set): nothing may then
	// lower an oom_score_adj, and runc fails the sandbox's -998 with
	// "can't get final child's PID from pipe: EOF".
	NoSysResource bool
}

// requiredNodeBinaries are the files `hack/controlplane.sh node` builds.
var requiredNodeBinaries = []string{"kube-controller-manager", "kube-proxy", "kubelet", "kubectl", "containerd", "containerd-shim-runc-v2"}

// requiredControlPlaneBinaries are the files `hack/controlplane.sh` builds.
var requiredControlPlaneBinaries = []string{"etcd", "kube-apiserver", "kube-scheduler"}

// Check looks for everything Start needs. The error is a *Missing or an
// *Unsupported (errors.As tells which).
func Check(controlPlaneDir, nodeDir string) (Host, error) {
	var h Host
	if os.Geteuid() != 0 {
		return h, &Unsupported{What: "the node suite runs a kubelet and containerd and needs root (it runs as uid " + fmt.Sprint(os.Geteuid()) + ")"}
	}
	for _, dir := range []struct {
		path, script string
		bins         []string
	}{
		{controlPlaneDir, "hack/controlplane.sh", requiredControlPlaneBinaries},
		{nodeDir, "hack/controlplane.sh node", requiredNodeBinaries},
	} {
		for _, b := range dir.bins {
			if !executable(filepath.Join(dir.path, b)) {
				return h, &Missing{What: "no executable " + b + " in " + fmt.Sprintf("%q", dir.path), Fix: "run " + dir.script}
			}
		}
	}
	runc, err := exec.LookPath("runc")
	if err != nil && executable("/usr/sbin/runc") {
		runc, err = "/usr/sbin/runc", nil
	}
	if err != nil {
		return h, &Missing{What: "runc not found", Fix: "hack/deps.sh node (apt-get install runc)"}
	}
	h.Runc = runc
	for _, p := range []string{"bridge", "host-local", "loopback", "portmap"} {
		if !executable(filepath.Join(CNIBinDir, p)) {
			return h, &Missing{What: "CNI plugin " + p + " not in " + CNIBinDir, Fix: "hack/deps.sh node (apt-get install containernetworking-plugins)"}
		}
	}
	for _, tool := range []string{"iptables", "iptables-save", "iptables-restore", "conntrack", "ip"} {
		if _, err := lookPath(tool); err != nil {
			pkg := map[string]string{"conntrack": "conntrack", "ip": "iproute2"}[tool]
			if pkg == "" {
				pkg = "iptables"
			}
			return h, &Missing{What: tool + " not found", Fix: "hack/deps.sh node (apt-get install " + pkg + ")"}
		}
	}
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil {
		return h, &Unsupported{What: "no cgroup file system at /sys/fs/cgroup: " + err.Error()}
	}
	h.CgroupV1 = st.Type != unix.CGROUP2_SUPER_MAGIC
	h.Overlay = hasFilesystem("overlay")
	if h.NoSysResource, err = lacksCapability(unix.CAP_SYS_RESOURCE); err != nil {
		return h, &Unsupported{What: "cannot read this process's capabilities: " + err.Error()}
	}
	if h.NodeIP, err = defaultRouteIP(); err != nil {
		return h, &Unsupported{What: "no IPv4 address for the node: " + err.Error()}
	}
	host, err := os.Hostname()
	if err != nil {
		return h, &Unsupported{What: "no host name: " + err.Error()}
	}
	h.NodeName = strings.ToLower(host)
	return h, nil
}

// IsMissing reports whether err is a *Missing.
func IsMissing(err error) bool {
	var m *Missing
	return errors.As(err, &m)
}

func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// lookPath finds tool on PATH or in the sbin directories a non-login root
// shell may lack.
func lookPath(tool string) (string, error) {
	if p, err := exec.LookPath(tool); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		if p := filepath.Join(dir, tool); executable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not on PATH, /usr/sbin or /sbin", tool)
}

// hasFilesystem reports whether /proc/filesystems lists name.
func hasFilesystem(name string) bool {
	f, err := os.Open("/proc/filesystems")
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 0 && fields[len(fields)-1] == name {
			return true
		}
	}
	return false
}

// defaultRouteIP is the first IPv4 address of the interface the default
// route leaves through (/proc/net/route), else of any non-loopback
// interface.
func defaultRouteIP() (string, error) {
	var ifaces []string
	if data, err := os.ReadFile("/proc/net/route"); err == nil {
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) > 2 && f[1] == "00000000" {
				ifaces = append(ifaces, f[0])
			}
		}
	}
	all, err := net.Interfaces()
	if err != nil {
		return "", fmt.Errorf("list interfaces: %w", err)
	}
	for _, i := range all {
		if i.Flags&net.FlagLoopback == 0 && i.Flags&net.FlagUp != 0 && i.Name != BridgeName {
			ifaces = append(ifaces, i.Name)
		}
	}
	for _, name := range ifaces {
		i, err := net.InterfaceByName(name)
		if err != nil {
			continue
		}
		addrs, err := i.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
				return n.IP.String(), nil
			}
		}
	}
	return "", errors.New("no interface with an IPv4 address besides loopback")
}

// lacksCapability reports whether capability c is missing from this
// process's effective set (the CapEff line of /proc/self/status).
func lacksCapability(c int) (bool, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false, fmt.Errorf("read capabilities: %w", err)
	}
	return lacksInStatus(string(data), c)
}

// lacksInStatus is lacksCapability on the text of /proc/<pid>/status.
func lacksInStatus(status string, c int) (bool, error) {
	for line := range strings.Lines(status) {
		hex, ok := strings.CutPrefix(line, "CapEff:")
		if !ok {
			continue
		}
		var eff uint64
		if _, err := fmt.Sscanf(strings.TrimSpace(hex), "%x", &eff); err != nil {
			return false, fmt.Errorf("parse CapEff %q: %w", strings.TrimSpace(hex), err)
		}
		return eff&(1<<uint(c)) == 0, nil
	}
	return false, errors.New("no CapEff line in /proc/self/status")
}
