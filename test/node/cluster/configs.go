package cluster

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
)

// The cluster's address ranges. They are private ranges this machine's own
// network is unlikely to use; Options can override neither, so a run always
// cleans up what it made.
const (
	// PodCIDR is the bridge network the pods get their addresses from.
	PodCIDR = "10.244.0.0/24"
	// ServiceCIDR holds the ClusterIPs; the kubernetes Service gets its .1.
	ServiceCIDR = "10.96.0.0/24"
	// kubernetesServiceIP is the first address of ServiceCIDR.
	kubernetesServiceIP = "10.96.0.1"
	// BridgeName is the Linux bridge the CNI bridge plugin creates.
	BridgeName = "isamatch0"
	// cniNetworkName names the CNI network (and its host-local state).
	cniNetworkName = "isamatch-node"
)

// writeFile writes data to dir/name (0600) and returns the path.
func writeFile(dir, name string, data []byte) (string, error) {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	return path, nil
}

// kubeconfig is a kubeconfig file for a client certificate.
func kubeconfig(server string, caPEM []byte, certFile, keyFile string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: isamatch-node
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: user
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: isamatch-node
  context:
    cluster: isamatch-node
    user: user
current-context: isamatch-node
`, server, base64.StdEncoding.EncodeToString(caPEM), certFile, keyFile)
}

// containerdConfig is containerd's config.toml (version 3): every path under
// dir, the runc shim with cgroupfs, images pulled through the registry hosts
// directory, the pause image from the suite's own registry, CNI from
// Debian's plugins. restrictOOM makes the CRI raise every oom_score_adj
// below containerd's own (the sandbox's -998, a Guaranteed container's
// -997) to that value: without CAP_SYS_RESOURCE runc cannot lower it.
func containerdConfig(dir, snapshotter, pauseImage, runcPath string, restrictOOM bool) []byte {
	return fmt.Appendf(nil, `version = 3
root = %[1]q
state = %[2]q

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins]
  [plugins.'io.containerd.internal.v1.opt']
    path = %[5]q
  [plugins.'io.containerd.nri.v1.nri']
    disable = true
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = %[6]q
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = %[7]q
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = %[8]q
  [plugins.'io.containerd.cri.v1.runtime']
    cdi_spec_dirs = []
    restrict_oom_score_adj = %[13]t
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = %[9]q
          Root = %[10]q
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [%[11]q]
      conf_dir = %[12]q
  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'
`,
		filepath.Join(dir, "root"), filepath.Join(dir, "state"),
		filepath.Join(dir, "containerd.sock"), filepath.Join(dir, "containerd.sock.ttrpc"),
		filepath.Join(dir, "opt"), snapshotter, pauseImage, filepath.Join(dir, "certs.d"),
		runcPath, filepath.Join(dir, "runc"), CNIBinDir, filepath.Join(dir, "net.d"), restrictOOM)
}

// registryHosts is containerd's hosts.toml for a plain-HTTP registry.
func registryHosts(host string) []byte {
	return fmt.Appendf(nil, `server = "http://%[1]s"

[host."http://%[1]s"]
  capabilities = ["pull", "resolve"]
  skip_verify = true
`, host)
}

// cniConfig is the pod network: a bridge with a gateway and masquerade,
// host-local addresses (its state under ipamDir), and port mappings.
func cniConfig(ipamDir string) []byte {
	return fmt.Appendf(nil, `{
  "cniVersion": "1.0.0",
  "name": %[1]q,
  "plugins": [
    {
      "type": "bridge",
      "bridge": %[2]q,
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %[3]q,
        "ranges": [[{"subnet": %[4]q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, cniNetworkName, BridgeName, ipamDir, PodCIDR)
}

// kubeletConfig is the KubeletConfiguration this machine needs: cgroup v1
// allowed, the cgroupfs driver (no systemd here), swap tolerated, eviction
// thresholds low enough for a shared CI disk, and every host path the
// kubelet would otherwise write under /var or /usr moved into the run's
// directory.
func kubeletConfig(p kubeletParams) []byte {
	return fmt.Appendf(nil, `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: %[1]t
cgroupDriver: cgroupfs
failSwapOn: false
memorySwap:
  swapBehavior: NoSwap
containerRuntimeEndpoint: unix://%[2]s
address: %[3]s
port: %[4]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[5]d
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %[6]q
authorization:
  mode: Webhook
tlsCertFile: %[7]q
tlsPrivateKeyFile: %[8]q
resolvConf: /etc/resolv.conf
podLogsDir: %[9]q
volumePluginDir: %[10]q
evictionHard:
  memory.available: 100Mi
  nodefs.available: "1%%"
  nodefs.inodesFree: "1%%"
  imagefs.available: "1%%"
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
registerNode: true
rotateCertificates: false
serverTLSBootstrap: false
maxPods: 20
`, !p.cgroupV1, p.runtimeSocket, p.nodeIP, p.port, p.healthzPort, p.clientCAFile,
		p.tlsCertFile, p.tlsKeyFile, p.podLogsDir, p.volumePluginDir)
}

// kubeletParams fills kubeletConfig.
type kubeletParams struct {
	cgroupV1                bool
	runtimeSocket           string
	nodeIP                  string
	port, healthzPort       int
	clientCAFile            string
	tlsCertFile, tlsKeyFile string
	podLogsDir              string
	volumePluginDir         string
}

// kubeProxyConfig runs kube-proxy in iptables mode without touching the
// conntrack sysctls (a VM may not allow it) or route_localnet.
func kubeProxyConfig(kubeconfigPath, nodeName string, healthzPort, metricsPort int) []byte {
	return fmt.Appendf(nil, `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %[1]q
hostnameOverride: %[2]q
mode: iptables
clusterCIDR: %[3]q
healthzBindAddress: 127.0.0.1:%[4]d
metricsBindAddress: 127.0.0.1:%[5]d
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
`, kubeconfigPath, nodeName, PodCIDR, healthzPort, metricsPort)
}

// schedulerConfig is the stock scheduler without leader election.
func schedulerConfig(kubeconfigPath string) []byte {
	return fmt.Appendf(nil, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
leaderElection:
  leaderElect: false
`, kubeconfigPath)
}
