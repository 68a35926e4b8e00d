package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// AssetsEnv is the environment variable that names the directory holding
// kube-apiserver, etcd and kube-scheduler.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// FeatureGatesEnv is the environment variable whose value, when set, is
// added to every kube-apiserver's --feature-gates (make test-compat turns
// on a gate an older release has off by default).
const FeatureGatesEnv = "ISAMATCH_APISERVER_FEATURE_GATES"

// Options configures Start.
type Options struct {
	// Scheduler also runs a real kube-scheduler process against the API
	// server (leader election off).
	Scheduler bool
	// SchedulerConfig, when set, is the complete KubeSchedulerConfiguration
	// YAML; "{{KUBECONFIG}}" in it is replaced with the admin kubeconfig
	// path. Empty means DefaultSchedulerConfig.
	SchedulerConfig string
	// WebhookInstallOptions are handed to envtest (for the webhook suites):
	// its certificates are generated and its configurations installed.
	WebhookInstallOptions envtest.WebhookInstallOptions
	// APIServerFlags are extra kube-apiserver flags (name without "--").
	APIServerFlags map[string][]string
	// SchedulerFlags are extra kube-scheduler arguments ("--feature-gates=...").
	SchedulerFlags []string
	// AddToScheme registers extra types beyond client-go's.
	AddToScheme []func(*runtime.Scheme) error
	// Dir holds logs, kubeconfig and configuration files. Empty means a new
	// temporary directory, removed by Stop unless ISAMATCH_KEEP_TMP=true.
	Dir string
}

// AdminQPS and AdminBurst are the client-side rate limits of the suites'
// admin clients, envtest's own: a test client that waits on client-go's
// default (5 requests/s) slows the spec, not the component under test.
const (
	AdminQPS   = 1000
	AdminBurst = 2000
)

// ControlPlane is a running kube-apiserver + etcd (+ kube-scheduler).
type ControlPlane struct {
	// Env is the envtest environment (its WebhookInstallOptions hold the
	// webhook serving host, port and certificate directory).
	Env *envtest.Environment
	// Config reaches the API server as an admin (system:masters).
	Config *rest.Config
	// Client is a controller-runtime client over a fresh scheme.
	Client client.Client
	// Scheme is that scheme: client-go's types plus Options.AddToScheme.
	Scheme *runtime.Scheme
	// KubeconfigPath is an admin kubeconfig file, for processes and kubectl.
	KubeconfigPath string
	// AssetsDir is the directory the binaries came from.
	AssetsDir string
	// Dir holds logs and configuration files.
	Dir string
	// Scheduler is the kube-scheduler process, nil unless Options.Scheduler.
	Scheduler *Process

	// schedulerPort is the scheduler's secure port on 127.0.0.1.
	schedulerPort int
	removeDir     bool
}

// AssetsDir returns the KUBEBUILDER_ASSETS directory after checking that it
// holds the binaries the harness runs.
func AssetsDir() (string, error) {
	dir := os.Getenv(AssetsEnv)
	const fix = "run `make test`, or export KUBEBUILDER_ASSETS=\"$(hack/controlplane.sh)\" before go test"
	if dir == "" {
		return "", fmt.Errorf("%s is not set: %s", AssetsEnv, fix)
	}
	for _, bin := range []string{"kube-apiserver", "etcd", "kube-scheduler"} {
		path := filepath.Join(dir, bin)
		if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s=%s has no executable %s: %s", AssetsEnv, dir, bin, fix)
		}
	}
	return dir, nil
}

// Start starts etcd and kube-apiserver from KUBEBUILDER_ASSETS and, if asked,
// kube-scheduler. ctx bounds the start-up only: the processes run until Stop.
func Start(ctx context.Context, opts Options) (cp *ControlPlane, err error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	cp = &ControlPlane{AssetsDir: assets, Dir: opts.Dir}
	if cp.Dir == "" {
		if cp.Dir, err = os.MkdirTemp("", "isamatch-cp-"); err != nil {
			return nil, fmt.Errorf("create control plane dir: %w", err)
		}
		cp.removeDir = true
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, cp.Stop())
			cp = nil
		}
	}()

	cp.Scheme = runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, opts.AddToScheme...) {
		if err := add(cp.Scheme); err != nil {
			return cp, fmt.Errorf("build scheme: %w", err)
		}
	}

	cp.Env = &envtest.Environment{
		BinaryAssetsDirectory: assets,
		Scheme:                cp.Scheme,
		WebhookInstallOptions: opts.WebhookInstallOptions,
		// A busy 2-core CI machine can be slow to bring etcd up.
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	apiServer := cp.Env.ControlPlane.GetAPIServer()
	for name, values := range opts.APIServerFlags {
		apiServer.Configure().Set(name, values...)
	}
	if gates := os.Getenv(FeatureGatesEnv); gates != "" {
		if own := apiServer.Configure().Get("feature-gates").Get(nil); len(own) > 0 {
			gates = strings.Join(own, ",") + "," + gates
		}
		apiServer.Configure().Set("feature-gates", gates)
	}
	if cp.Config, err = cp.Env.Start(); err != nil {
		return cp, fmt.Errorf("start kube-apiserver and etcd from %s: %w", assets, err)
	}
	if cp.Client, err = client.New(cp.Config, client.Options{Scheme: cp.Scheme}); err != nil {
		return cp, fmt.Errorf("create client: %w", err)
	}

	// A kubeconfig file for processes the suites run (scheduler, labeler,
	// webhook, kubectl): an admin in system:masters.
	admin, err := cp.Env.AddUser(envtest.User{Name: "isamatch-admin", Groups: []string{"system:masters"}}, &rest.Config{QPS: AdminQPS, Burst: AdminBurst})
	if err != nil {
		return cp, fmt.Errorf("add admin user: %w", err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return cp, fmt.Errorf("render admin kubeconfig: %w", err)
	}
	cp.KubeconfigPath = filepath.Join(cp.Dir, "admin.kubeconfig")
	if err := os.WriteFile(cp.KubeconfigPath, kubeconfig, 0o600); err != nil {
		return cp, fmt.Errorf("write admin kubeconfig: %w", err)
	}

	if opts.Scheduler {
		if err := cp.startScheduler(ctx, opts.SchedulerConfig, opts.SchedulerFlags); err != nil {
			return cp, err
		}
	}
	return cp, nil
}

// Stop stops the scheduler, the API server and etcd, and removes the
// temporary directory it created (kept when ISAMATCH_KEEP_TMP=true).
func (cp *ControlPlane) Stop() error {
	if cp == nil {
		return nil
	}
	var errs []error
	if cp.Scheduler != nil {
		errs = append(errs, cp.Scheduler.Stop(10*time.Second))
	}
	if cp.Env != nil {
		if err := cp.Env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop kube-apiserver and etcd: %w", err))
		}
	}
	if cp.removeDir && !keepTmp() {
		errs = append(errs, os.RemoveAll(cp.Dir))
	}
	return errors.Join(errs...)
}

// DefaultSchedulerConfig is the stock scheduler's configuration with leader
// election off and a client fast enough for a thousand pods.
const DefaultSchedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: "{{KUBECONFIG}}"
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
`

// startScheduler runs kube-scheduler on a free loopback port and waits for
// its healthz.
func (cp *ControlPlane) startScheduler(ctx context.Context, config string, extraArgs []string) error {
	if config == "" {
		config = DefaultSchedulerConfig
	}
	config = strings.ReplaceAll(config, "{{KUBECONFIG}}", cp.KubeconfigPath)
	configPath := filepath.Join(cp.Dir, "kube-scheduler.yaml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		return fmt.Errorf("write scheduler config: %w", err)
	}
	certDir := filepath.Join(cp.Dir, "kube-scheduler-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return fmt.Errorf("create scheduler cert dir: %w", err)
	}
	return StartOnFreePorts(1, func(ports []int) error {
		args := []string{
			"--config=" + configPath,
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(ports[0]),
			"--cert-dir=" + certDir,
			"--authentication-kubeconfig=" + cp.KubeconfigPath,
			"--authorization-kubeconfig=" + cp.KubeconfigPath,
			"--v=2",
		}
		args = append(args, extraArgs...)
		p, err := StartProcess("kube-scheduler", filepath.Join(cp.AssetsDir, "kube-scheduler"), args, nil,
			filepath.Join(cp.Dir, "kube-scheduler.log"))
		if err != nil {
			return err
		}
		url := fmt.Sprintf("https://127.0.0.1:%d/healthz", ports[0])
		if err := p.WaitHTTP(ctx, url, nil, 60*time.Second, func(status int) bool { return status == 200 }); err != nil {
			_ = p.Stop(10 * time.Second) // err carries its log tail
			return err
		}
		cp.Scheduler, cp.schedulerPort = p, ports[0]
		return nil
	})
}

// SchedulerLogTail returns the last n lines of the scheduler's log, or "" if
// no scheduler runs. Print it when a placement assertion fails.
func (cp *ControlPlane) SchedulerLogTail(n int) string {
	if cp == nil || cp.Scheduler == nil {
		return ""
	}
	return cp.Scheduler.LogTail(n)
}
