package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
)

// Stop tears the node down and leaves the host as it found it, in the
// reverse order of Start: pods are deleted through the API (so the kubelet
// stops their containers and CNI releases their addresses) with the
// controllers stopped first so nothing recreates them, then the components
// stop, leftover shims of this run are killed, mounts under Dir are
// unmounted, kube-proxy's rules and the bridge are removed, the sysctls
// restored and Dir deleted (kept when ISAMATCH_KEEP_TMP=true). It is safe
// on a nil cluster and when called again.
func (c *Cluster) Stop() error {
	if c == nil {
		return nil
	}
	return c.Stage.Stop()
}

// drain stops kube-controller-manager, so nothing recreates a pod, and
// deletes every pod while the kubelet still runs to confirm each gone.
func (c *Cluster) drain(kcm, kubelet *testbed.Process) error {
	errs := []error{kcm.Stop(10 * time.Second)}
	if exited, _ := kubelet.Exited(); !exited && c.Client != nil {
		errs = append(errs, c.drainPods(context.Background(), 2*time.Minute))
	}
	return errors.Join(errs...)
}

// cleanHost undoes what the components did to the host once they have
// stopped: the shims of this run, the mounts under Dir, kube-proxy's and
// the kubelet's rules, and the bridge.
func (c *Cluster) cleanHost() error {
	errs := []error{c.killShims(), unmountUnder(c.opts.Dir)}
	if proxy := filepath.Join(c.opts.NodeDir, "kube-proxy"); executable(proxy) {
		// Removes every KUBE-* chain kube-proxy made (iptables, nftables, ipvs).
		if out, err := exec.Command(proxy, "--cleanup").CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("kube-proxy --cleanup: %w\n%s", err, out))
		}
	}
	removeKubeletChains()
	if ip, err := lookPath("ip"); err == nil {
		if exec.Command(ip, "link", "show", BridgeName).Run() == nil {
			if out, err := exec.Command(ip, "link", "delete", BridgeName).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("ip link delete %s: %w\n%s", BridgeName, err, out))
			}
		}
	}
	return errors.Join(errs...)
}

// removeDir deletes Dir, unless ISAMATCH_KEEP_TMP=true keeps it for its
// logs.
func (c *Cluster) removeDir() error {
	if c.opts.Dir == "" || os.Getenv(testbed.KeepTmpEnv) == "true" {
		return nil
	}
	return os.RemoveAll(c.opts.Dir)
}

// setSysctls turns on what pod networking needs: forwarding, and bridged
// traffic through iptables (kube-proxy's Service rules for pod-to-pod
// traffic on one bridge). Stop restores each value it changed.
func (c *Cluster) setSysctls() error {
	for _, name := range []string{"net/ipv4/ip_forward", "net/bridge/bridge-nf-call-iptables"} {
		path := filepath.Join("/proc/sys", name)
		old, err := os.ReadFile(path)
		if err != nil {
			return &Unsupported{What: "cannot read " + path + " (br_netfilter missing?): " + err.Error()}
		}
		if err := os.WriteFile(path, []byte("1"), 0o644); err != nil {
			return &Unsupported{What: "cannot set " + path + ": " + err.Error()}
		}
		c.OnStop(func() error { return os.WriteFile(path, old, 0o644) })
	}
	return nil
}

// removeKubeletChains removes the iptables chains the kubelet itself makes
// (kube-proxy --cleanup leaves them): KUBE-FIREWALL, which drops traffic
// from other addresses to 127.0.0.0/8, its jumps from INPUT and OUTPUT, and
// the canary and hint chains. Best effort: a chain that is not there is fine.
func removeKubeletChains() {
	for _, tool := range []string{"iptables", "ip6tables"} {
		bin, err := lookPath(tool)
		if err != nil {
			continue
		}
		ipt := func(args ...string) { _ = exec.Command(bin, append([]string{"-w"}, args...)...).Run() }
		for _, hook := range []string{"INPUT", "OUTPUT"} {
			ipt("-t", "filter", "-D", hook, "-j", "KUBE-FIREWALL")
		}
		for _, table := range []string{"filter", "nat", "mangle"} {
			for _, chain := range []string{"KUBE-FIREWALL", "KUBE-KUBELET-CANARY", "KUBE-IPTABLES-HINT"} {
				ipt("-t", table, "-F", chain)
				ipt("-t", table, "-X", chain)
			}
		}
	}
}

// drainPods deletes every pod and waits until the kubelet has confirmed
// each one gone.
func (c *Cluster) drainPods(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var pods corev1.PodList
	if err := c.Client.List(ctx, &pods); err != nil {
		return fmt.Errorf("list pods to drain: %w", err)
	}
	for i := range pods.Items {
		_ = c.Client.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(1))
	}
	for {
		if err := c.Client.List(ctx, &pods); err == nil && len(pods.Items) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d pods still on node %s after %s", len(pods.Items), c.NodeName, timeout)
		case <-time.After(time.Second):
		}
	}
}

// killShims kills containerd-shim processes of this run (their command line
// names this run's containerd socket) and, with them, their containers.
func (c *Cluster) killShims() error {
	if c.opts.Dir == "" {
		return nil
	}
	sock := filepath.Join(c.opts.Dir, "containerd", "containerd.sock")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return fmt.Errorf("list processes: %w", err)
	}
	var errs []error
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) == 0 || filepath.Base(args[0]) != "containerd-shim-runc-v2" || !slices.Contains(args, sock) {
			continue
		}
		if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("kill shim %d: %w", pid, err))
			}
		}
	}
	return errors.Join(errs...)
}

// unmountUnder detaches every mount at or below dir, deepest first (the
// kubelet's volumes, containerd's rootfs and the kubelet's own rshared bind
// mount of its root directory).
func unmountUnder(dir string) error {
	if dir == "" {
		return nil
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("read mounts: %w", err)
	}
	defer f.Close()
	var points []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMount(fields[4])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	slices.SortFunc(points, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
