package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
)

// Options configures Start.
type Options struct {
	// ControlPlaneDir holds etcd, kube-apiserver, kube-scheduler
	// (hack/controlplane.sh).
	ControlPlaneDir string
	// NodeDir holds kube-controller-manager, kube-proxy, kubelet, kubectl,
	// containerd and its shim (hack/controlplane.sh node).
	NodeDir string
	// Dir holds everything the run writes; Stop removes it. It must be short:
	// unix socket paths under it are limited to 108 bytes.
	Dir string
	// Host is what Check found.
	Host Host
	// Registry is the HOST:PORT of the plain-HTTP registry the runtime
	// pulls from.
	Registry string
	// PauseImage is the sandbox image, in Registry.
	PauseImage string
}

// Cluster is a running one-node cluster. Its stage holds every part
// started and each change made to the host, undone by Stop in the reverse
// order.
type Cluster struct {
	*testbed.Stage
	opts Options
	// Kubeconfig is an admin (system:masters) kubeconfig file.
	Kubeconfig string
	// Client is an admin client.
	Client client.Client
	// NodeName is the registered node.
	NodeName string

	procs    []*testbed.Process // in start order
	kubeletP *testbed.Process
}

// start is one attempt of Start, on the ports it is given.
func start(ctx context.Context, opts Options, ports []int) (c *Cluster, err error) {
	stage, err := testbed.NewStage("node", opts.Dir, nil)
	if err != nil {
		return nil, err
	}
	c = &Cluster{Stage: stage, opts: opts, NodeName: opts.Host.NodeName}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
			c = nil
		}
	}()
	// What Stop undoes last: Dir, then the sysctls, then the host's network
	// and mounts, after every component has stopped.
	c.OnStop(c.removeDir)
	for _, d := range []string{"pki", "etcd", "containerd/certs.d", "containerd/net.d", "cni", "kubelet", "logs"} {
		if err := os.MkdirAll(filepath.Join(opts.Dir, d), 0o700); err != nil {
			return c, fmt.Errorf("create %s: %w", d, err)
		}
	}
	if err := c.setSysctls(); err != nil {
		return c, err
	}
	c.OnStop(c.cleanHost)
	etcdClient, etcdPeer, apiPort, kcmPort, schedPort, kubeletPort, kubeletHealthz, proxyHealthz, proxyMetrics :=
		ports[0], ports[1], ports[2], ports[3], ports[4], ports[5], ports[6], ports[7], ports[8]

	pki := filepath.Join(opts.Dir, "pki")
	ca, err := newCA()
	if err != nil {
		return c, err
	}
	caFile, err := writeFile(pki, "ca.crt", ca.certPEM)
	if err != nil {
		return c, err
	}
	nodeIP := net.ParseIP(opts.Host.NodeIP)
	server := "https://" + net.JoinHostPort(opts.Host.NodeIP, strconv.Itoa(apiPort))
	apiCert, apiKey, err := ca.issue(pki, "kube-apiserver", certSpec{
		commonName: "kube-apiserver", server: true,
		dnsNames: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"},
		ips:      []net.IP{nodeIP, net.ParseIP(kubernetesServiceIP), net.IPv4(127, 0, 0, 1)},
	})
	if err != nil {
		return c, err
	}
	saKey, saPub, err := writeKeyPair(pki, "service-account")
	if err != nil {
		return c, err
	}
	// One kubeconfig per identity: each gets the RBAC the API server's
	// bootstrap policy gives it, as in a kubeadm cluster.
	identities := []struct{ name, cn, group string }{
		{"admin", "isamatch-node-admin", "system:masters"},
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", "system:masters"},
		{"kube-controller-manager", "system:kube-controller-manager", ""},
		{"kube-scheduler", "system:kube-scheduler", ""},
		{"kube-proxy", "system:kube-proxy", ""},
		{"kubelet", "system:node:" + c.NodeName, "system:nodes"},
	}
	kubeconfigs := map[string]string{}
	certs := map[string][2]string{}
	for _, id := range identities {
		var groups []string
		if id.group != "" {
			groups = []string{id.group}
		}
		crt, key, err := ca.issue(pki, id.name, certSpec{commonName: id.cn, groups: groups})
		if err != nil {
			return c, err
		}
		certs[id.name] = [2]string{crt, key}
		if kubeconfigs[id.name], err = writeFile(pki, id.name+".kubeconfig", kubeconfig(server, ca.certPEM, crt, key)); err != nil {
			return c, err
		}
	}
	c.Kubeconfig = kubeconfigs["admin"]
	// The aggregation layer's client certificate (kubeadm's front-proxy
	// client): aggregated APIs such as metrics-server trust the user the
	// API server names in its request headers only with it.
	frontProxy, frontProxyKey, err := ca.issue(pki, "front-proxy-client", certSpec{commonName: "front-proxy-client"})
	if err != nil {
		return c, err
	}
	kubeletServing, kubeletServingKey, err := ca.issue(pki, "kubelet-serving", certSpec{
		commonName: c.NodeName, server: true, dnsNames: []string{c.NodeName}, ips: []net.IP{nodeIP},
	})
	if err != nil {
		return c, err
	}

	cp, node := opts.ControlPlaneDir, opts.NodeDir

	// etcd
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClient)
	etcd, err := c.start("etcd", filepath.Join(cp, "etcd"), []string{
		"--data-dir=" + filepath.Join(opts.Dir, "etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=http://127.0.0.1:" + strconv.Itoa(etcdPeer),
		"--initial-advertise-peer-urls=http://127.0.0.1:" + strconv.Itoa(etcdPeer),
		"--initial-cluster=default=http://127.0.0.1:" + strconv.Itoa(etcdPeer),
		"--unsafe-no-fsync=true", "--log-level=warn",
	}, nil)
	if err != nil {
		return c, err
	}
	if err := etcd.WaitHTTP(ctx, etcdURL+"/health", nil, time.Minute, ok200); err != nil {
		return c, err
	}

	// kube-apiserver: on the node address, so pods reach it through the
	// kubernetes Service and kube-proxy.
	api, err := c.start("kube-apiserver", filepath.Join(cp, "kube-apiserver"), []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=" + opts.Host.NodeIP, "--advertise-address=" + opts.Host.NodeIP,
		"--secure-port=" + strconv.Itoa(apiPort),
		"--cert-dir=" + pki,
		"--tls-cert-file=" + apiCert, "--tls-private-key-file=" + apiKey,
		"--client-ca-file=" + caFile,
		"--kubelet-client-certificate=" + certs["apiserver-kubelet-client"][0],
		"--kubelet-client-key=" + certs["apiserver-kubelet-client"][1],
		"--kubelet-certificate-authority=" + caFile,
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saPub, "--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--requestheader-client-ca-file=" + caFile, "--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + frontProxy, "--proxy-client-key-file=" + frontProxyKey,
		// Aggregated APIs are reached at their endpoints (pod IPs on the
		// bridge) rather than through a ClusterIP from the host.
		"--enable-aggregator-routing=true",
		"--allow-privileged=true",
	}, nil)
	if err != nil {
		return c, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.certPEM)
	if err := api.WaitHTTP(ctx, server+"/readyz", &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, 2*time.Minute, ok200); err != nil {
		return c, err
	}
	if c.Client, err = newClient(c.Kubeconfig); err != nil {
		return c, err
	}

	// kube-controller-manager: the DaemonSet, Deployment, ReplicaSet and
	// namespace controllers, each with its own service account.
	kcm, err := c.start("kube-controller-manager", filepath.Join(node, "kube-controller-manager"), []string{
		"--kubeconfig=" + kubeconfigs["kube-controller-manager"],
		"--authentication-kubeconfig=" + kubeconfigs["kube-controller-manager"],
		"--authorization-kubeconfig=" + kubeconfigs["kube-controller-manager"],
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + saKey,
		"--root-ca-file=" + caFile,
		"--cluster-cidr=" + PodCIDR, "--service-cluster-ip-range=" + ServiceCIDR,
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(kcmPort),
		"--cert-dir=" + filepath.Join(pki, "kcm"),
	}, nil)
	if err != nil {
		return c, err
	}
	schedConfig, err := writeFile(pki, "kube-scheduler.yaml", schedulerConfig(kubeconfigs["kube-scheduler"]))
	if err != nil {
		return c, err
	}
	if _, err := c.start("kube-scheduler", filepath.Join(cp, "kube-scheduler"), []string{
		"--config=" + schedConfig,
		"--authentication-kubeconfig=" + kubeconfigs["kube-scheduler"],
		"--authorization-kubeconfig=" + kubeconfigs["kube-scheduler"],
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(schedPort),
		"--cert-dir=" + filepath.Join(pki, "scheduler"),
	}, nil); err != nil {
		return c, err
	}

	// containerd
	ctrDir := filepath.Join(opts.Dir, "containerd")
	snapshotter := "native"
	if opts.Host.Overlay {
		snapshotter = "overlayfs"
	}
	hostsDir := filepath.Join(ctrDir, "certs.d", opts.Registry)
	if err := os.MkdirAll(hostsDir, 0o700); err != nil {
		return c, fmt.Errorf("create registry hosts dir: %w", err)
	}
	if _, err := writeFile(hostsDir, "hosts.toml", registryHosts(opts.Registry)); err != nil {
		return c, err
	}
	if _, err := writeFile(filepath.Join(ctrDir, "net.d"), "10-isamatch.conflist", cniConfig(filepath.Join(opts.Dir, "cni"))); err != nil {
		return c, err
	}
	ctrConfig, err := writeFile(ctrDir, "config.toml", containerdConfig(ctrDir, snapshotter, opts.PauseImage, opts.Host.Runc, opts.Host.NoSysResource))
	if err != nil {
		return c, err
	}
	// The shim and runc are found on PATH.
	pathEnv := []string{"PATH=" + node + ":" + os.Getenv("PATH") + ":/usr/sbin:/sbin"}
	ctr, err := c.start("containerd", filepath.Join(node, "containerd"), []string{"--config=" + ctrConfig, "--log-level=info"}, pathEnv)
	if err != nil {
		return c, err
	}
	sock := filepath.Join(ctrDir, "containerd.sock")
	if err := waitSocket(ctx, ctr, sock, time.Minute); err != nil {
		return c, err
	}

	// kubelet
	kubeletDir := filepath.Join(opts.Dir, "kubelet")
	kcfg, err := writeFile(pki, "kubelet.yaml", kubeletConfig(kubeletParams{
		cgroupV1: opts.Host.CgroupV1, runtimeSocket: sock, nodeIP: opts.Host.NodeIP,
		port: kubeletPort, healthzPort: kubeletHealthz, clientCAFile: caFile,
		tlsCertFile: kubeletServing, tlsKeyFile: kubeletServingKey,
		podLogsDir: filepath.Join(opts.Dir, "pod-logs"), volumePluginDir: filepath.Join(opts.Dir, "volume-plugins"),
	}))
	if err != nil {
		return c, err
	}
	kubelet, err := c.start("kubelet", filepath.Join(node, "kubelet"), []string{
		"--config=" + kcfg,
		"--kubeconfig=" + kubeconfigs["kubelet"],
		"--root-dir=" + kubeletDir,
		"--cert-dir=" + filepath.Join(pki, "kubelet"),
		"--hostname-override=" + c.NodeName,
		"--node-ip=" + opts.Host.NodeIP,
		"--v=1",
	}, pathEnv)
	if err != nil {
		return c, err
	}
	c.kubeletP = kubelet

	// kube-proxy
	pcfg, err := writeFile(pki, "kube-proxy.yaml", kubeProxyConfig(kubeconfigs["kube-proxy"], c.NodeName, proxyHealthz, proxyMetrics))
	if err != nil {
		return c, err
	}
	if _, err := c.start("kube-proxy", filepath.Join(node, "kube-proxy"), []string{"--config=" + pcfg}, pathEnv); err != nil {
		return c, err
	}
	// What Stop does first: the pods go while the node still runs them.
	c.OnStop(func() error { return c.drain(kcm, kubelet) })

	if err := c.waitNodeReady(ctx, 3*time.Minute); err != nil {
		return c, err
	}
	return c, nil
}

func ok200(status int) bool { return status == http.StatusOK }

// start runs one component, its log under Dir/logs; Stop stops it.
func (c *Cluster) start(name, bin string, args, env []string) (*testbed.Process, error) {
	p, err := testbed.StartProcess(name, bin, args, env, filepath.Join(c.opts.Dir, "logs", name+".log"))
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	c.OnStop(func() error { return p.Stop(15 * time.Second) })
	return p, nil
}

// LogTails returns the last lines of every component's log.
func (c *Cluster) LogTails(lines int) string {
	var b strings.Builder
	for _, p := range c.procs {
		b.WriteString(p.LogTail(lines))
	}
	return b.String()
}

// LogDir is where the components' logs are.
func (c *Cluster) LogDir() string { return filepath.Join(c.opts.Dir, "logs") }

// waitNodeReady waits until the node is registered and Ready, or a
// component exits.
func (c *Cluster) waitNodeReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		for _, p := range c.procs {
			if exited, err := p.Exited(); exited {
				return fmt.Errorf("%s exited (%v) before node %s was ready\n%s", p.Name, err, c.NodeName, p.LogTail(40))
			}
		}
		var node corev1.Node
		if err := c.Client.Get(ctx, client.ObjectKey{Name: c.NodeName}, &node); err != nil {
			last = err.Error()
		} else if testbed.NodeIsReady(&node) {
			return nil
		} else {
			last = "registered, not Ready: " + readyMessage(&node)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not ready after %s (last: %s)\n%s", c.NodeName, timeout, last, c.kubeletP.LogTail(40))
		case <-time.After(time.Second):
		}
	}
}

func readyMessage(node *corev1.Node) string {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Reason + ": " + cond.Message
		}
	}
	return "no Ready condition"
}

// newClient builds an admin client from a kubeconfig file. A kubeconfig
// sets no client-side rate limit, so client-go would hold the suite to 5
// requests/s (burst 10): a spec that reads and deletes 30 pods would wait
// on its own client. The limits are the other suites' (testbed).
func newClient(path string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	cfg.QPS, cfg.Burst = testbed.AdminQPS, testbed.AdminBurst
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	return cl, nil
}

// waitSocket waits until a unix socket accepts connections.
func waitSocket(ctx context.Context, p *testbed.Process, path string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("%s exited while starting (%v)\n%s", p.Name, err, p.LogTail(30))
		}
		if conn, err := net.Dial("unix", path); err == nil {
			return conn.Close()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: no socket %s after %s\n%s", p.Name, path, timeout, p.LogTail(30))
		case <-time.After(200 * time.Millisecond):
		}
	}
}
