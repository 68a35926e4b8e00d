package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/internal/buildinfo"
	"github.com/isamatch/isamatch/pkg/registry"
)

func TestParseArgs(t *testing.T) {
	defaults := options{
		certDir:     "/tmp/k8s-webhook-server/serving-certs",
		port:        9443,
		metricsAddr: ":8080",
		probeAddr:   ":8081",
		cacheTTL:    5 * time.Minute,
		budget:      8 * time.Second,
		namespace:   "isamatch-system",
		logFormat:   "text",

		perHost:         registry.DefaultMaxPerHost,
		perNamespace:    registry.DefaultMaxPerNamespace,
		maxIndexEntries: registry.DefaultMaxIndexEntries,
		maxResolution:   registry.DefaultMaxResolutionBytes,
		cacheBytes:      registry.DefaultMaxCacheBytes,
		metricsSecure:   true,
		metricsAudience: "isamatch-metrics",
		enforcement:     "deny",
		nsModes:         []string{"deny", "warn"},
		resolve:         "auto",
		gateTimeout:     20 * time.Second,
		gateWorkers:     16,
		gateAttempt:     2 * time.Second,
		gateController:  true,
		leaderElect:     true,
		podEvents:       true,
		misplaceEvents:  true,
		auditInterval:   time.Minute,
		inferELF:        true,
		inferMaxBytes:   64 << 20,
		inferTimeout:    10 * time.Second,
		qemuCPU:         "inject",
		bareKeys:        true,

		digestCacheBytes: 16 << 20,
		pluginTimeout:    10 * time.Second,
		pluginRuns:       8,
		pluginRunsPerNS:  2,
	}
	tests := []struct {
		name      string
		args      []string
		inCluster bool
		// podNamespace is $POD_NAMESPACE (the downward API).
		podNamespace string
		want         func(o *options)
		wantErr      string
	}{
		{name: "defaults out of cluster", want: func(o *options) {}},
		{name: "namespace from the downward API", podNamespace: "platform-isa", want: func(o *options) { o.namespace = "platform-isa" }},
		{name: "flag over the downward API", podNamespace: "platform-isa", args: []string{"--namespace=other"}, want: func(o *options) { o.namespace = "other" }},
		{name: "defaults in cluster rotate certificates", inCluster: true, want: func(o *options) { o.certRotation = true }},
		{name: "rotation can be turned off in cluster", inCluster: true, args: []string{"--cert-rotation=false"}, want: func(o *options) {}},
		{name: "everything", args: []string{
			"--kubeconfig", "/k/config", "--cert-dir", "/certs", "--port", "10443",
			"--metrics-bind-address", "0", "--health-probe-bind-address", ":9000",
			"--registry-ca", "/ca.pem", "--insecure-registry", "127.0.0.1:5000", "--insecure-registry", "lab:80",
			"--cache-ttl", "1m", "--budget", "3s", "--cert-rotation", "--namespace", "other", "-v", "1", "--enable-http2",
		}, want: func(o *options) {
			o.enableHTTP2 = true
			o.kubeconfig, o.certDir, o.port = "/k/config", "/certs", 10443
			o.metricsAddr, o.probeAddr, o.registryCA = "0", ":9000", "/ca.pem"
			o.insecureRegistries = stringList{"127.0.0.1:5000", "lab:80"}
			o.cacheTTL, o.budget, o.certRotation, o.namespace, o.verbosity = time.Minute, 3*time.Second, true, "other", 1
		}},
		{name: "registry limits", args: []string{
			"--allow-registry", "registry.lab:5000", "--allow-registry", "10.0.0.0/8",
			"--registry-max-per-host", "2", "--registry-max-per-namespace", "3", "--registry-max-index-entries", "16",
			"--registry-max-bytes", "1048576", "--registry-cache-bytes", "1000000",
		}, want: func(o *options) {
			o.allowRegistries = stringList{"registry.lab:5000", "10.0.0.0/8"}
			o.perHost, o.perNamespace, o.maxIndexEntries, o.maxResolution, o.cacheBytes = 2, 3, 16, 1<<20, 1000000
		}},
		{name: "plugin concurrency", args: []string{"--image-credential-provider-max-runs", "4", "--image-credential-provider-max-runs-per-namespace", "4"}, want: func(o *options) {
			o.pluginRuns, o.pluginRunsPerNS = 4, 4
		}},
		{name: "plugin runs per namespace above the total", args: []string{"--image-credential-provider-max-runs", "4", "--image-credential-provider-max-runs-per-namespace", "5"},
			wantErr: "--image-credential-provider-max-runs-per-namespace 5: want 1..4 (credentialProviders.maxRuns)"},
		{name: "evict needs the watcher", args: []string{"--evict-misplaced", "--misplacement-events=false"}, wantErr: "--evict-misplaced true: needs misplacement.events: the watcher finds the pods it evicts"},
		{name: "audit too often", args: []string{"--audit-interval=1s"}, wantErr: "--audit-interval 1s: want 0 (off) or at least 10s"},
		{name: "audit off, eviction on", args: []string{"--audit-interval=0", "--evict-misplaced"}, want: func(o *options) { o.auditInterval, o.evictMisplaced = 0, true }},
		{name: "plugin runs 0", args: []string{"--image-credential-provider-max-runs", "0"}, wantErr: "--image-credential-provider-max-runs 0: want 1..64"},
		{name: "bare keys off", args: []string{"--bare-keys=false"}, want: func(o *options) { o.bareKeys = false }},
		{name: "metrics audience", args: []string{"--metrics-token-audience", "prometheus.example/isamatch"}, want: func(o *options) { o.metricsAudience = "prometheus.example/isamatch" }},
		{name: "metrics audience empty", args: []string{"--metrics-token-audience", ""}, wantErr: `--metrics-token-audience: token audience "": want 1..253 characters`},
		{name: "cluster networks", args: []string{"--cluster-network", "10.244.0.0/16", "--cluster-network", "fd00:10:96::/108"}, want: func(o *options) {
			o.clusterNetworks = stringList{"10.244.0.0/16", "fd00:10:96::/108"}
		}},
		{name: "cluster network not a CIDR", args: []string{"--cluster-network", "10.96.0.0/40"}, wantErr: `--cluster-network: cluster network "10.96.0.0/40": not a CIDR`},
		{name: "allowed registry not a CIDR", args: []string{"--allow-registry", "10.0.0.0/40"}, wantErr: `--allow-registry: allowed registry "10.0.0.0/40"`},
		{name: "zero per-namespace slots", args: []string{"--registry-max-per-namespace", "0"}, wantErr: "--registry-max-per-namespace 0: want a number >= 1"},
		{name: "client CA and plain HTTP metrics", args: []string{"--client-ca-file", "/ca/client-ca.crt", "--metrics-secure=false"}, want: func(o *options) {
			o.clientCAFile, o.metricsSecure = "/ca/client-ca.crt", false
		}},
		{name: "credential providers", args: []string{"--image-credential-provider-config", "/etc/cp/config.yaml", "--image-credential-provider-bin-dir", "/cp/bin"}, want: func(o *options) {
			o.credProviderConfig, o.credProviderBinDir = "/etc/cp/config.yaml", "/cp/bin"
		}},
		{name: "credential provider timeout and digest cache", args: []string{"--image-credential-provider-timeout=1m", "--registry-digest-cache-bytes=1048576"}, want: func(o *options) {
			o.pluginTimeout, o.digestCacheBytes = time.Minute, 1<<20
		}},
		{name: "zero credential provider timeout", args: []string{"--image-credential-provider-timeout=0s"},
			wantErr: "--image-credential-provider-timeout 0s: want a duration in (0, 1m]"},
		{name: "negative credential provider timeout", args: []string{"--image-credential-provider-timeout=-1s"},
			wantErr: "--image-credential-provider-timeout -1s: want a duration in (0, 1m]"},
		{name: "credential provider timeout over the kubelet's", args: []string{"--image-credential-provider-timeout=61s"},
			wantErr: "--image-credential-provider-timeout 1m1s: want a duration in (0, 1m]"},
		{name: "zero digest cache", args: []string{"--registry-digest-cache-bytes=0"}, wantErr: "--registry-digest-cache-bytes 0: want a number >= 1"},
		{name: "digest cache not a number", args: []string{"--registry-digest-cache-bytes=16MiB"}, wantErr: `invalid value "16MiB" for flag -registry-digest-cache-bytes`},
		{name: "credential provider config without bin dir", args: []string{"--image-credential-provider-config", "/etc/cp/config.yaml"},
			wantErr: "credentialProviders.config and credentialProviders.binDir go together"},
		{name: "credential provider bin dir without config", args: []string{"--image-credential-provider-bin-dir", "/cp/bin"},
			wantErr: "credentialProviders.config and credentialProviders.binDir go together"},
		{name: "mirrors and pull secrets", args: []string{"--registry-mirror", "docker.io=mirror.local:5000", "--registry-mirror=ghcr.io=10.0.0.5", "--pull-secrets"}, want: func(o *options) {
			o.mirrors, o.pullSecrets = stringList{"docker.io=mirror.local:5000", "ghcr.io=10.0.0.5"}, true
		}},
		{name: "hosts dir beside a mirror", args: []string{"--registry-hosts-dir", "/etc/isamatch/registry-hosts", "--registry-mirror=ghcr.io=10.0.0.5"}, want: func(o *options) {
			o.hostsDir, o.mirrors = "/etc/isamatch/registry-hosts", stringList{"ghcr.io=10.0.0.5"}
		}},
		{name: "malformed mirror", args: []string{"--registry-mirror", "mirror.local:5000"}, wantErr: `--registry-mirror: mirror "mirror.local:5000": want REGISTRY=MIRROR`},
		{name: "mirror with a scheme", args: []string{"--registry-mirror", "docker.io=http://m.local"}, wantErr: `"http://m.local": want a host or host:port without scheme or path`},
		{name: "warn mode", args: []string{"--enforcement=warn"}, want: func(o *options) { o.enforcement = "warn" }},
		{name: "namespaces may choose warn only", args: []string{"--namespace-enforcement=warn"}, want: func(o *options) { o.nsModes = []string{"warn"} }},
		{name: "namespaces may not choose", args: []string{"--namespace-enforcement=none"}, want: func(o *options) { o.nsModes = nil }},
		{name: "namespace mode that is no mode", args: []string{"--namespace-enforcement=deny,audit"}, wantErr: `--namespace-enforcement "deny,audit": "audit" is not a mode`},
		{name: "gate mode without the controller", args: []string{"--resolve=gate", "--gate-timeout=5s", "--gate-controller=false", "--leader-elect=false"}, want: func(o *options) {
			o.resolve, o.gateTimeout, o.gateController, o.leaderElect = "gate", 5*time.Second, false, false
		}},
		{name: "QEMU_CPU injection off", args: []string{"--qemu-cpu=off"}, want: func(o *options) { o.qemuCPU = "off" }},
		{name: "QEMU_CPU mode unknown", args: []string{"--qemu-cpu=on"}, wantErr: `--qemu-cpu "on": want inject or off`},
		{name: "fallback architecture", args: []string{"--fallback-architecture", "arm64"}, want: func(o *options) { o.fallbackArch = "arm64" }},
		{name: "unknown fallback architecture", args: []string{"--fallback-architecture=x86_64"}, wantErr: `--fallback-architecture: fallback architecture "x86_64": want one of amd64, arm64, riscv64, or empty for none`},
		{name: "sync mode", args: []string{"--resolve", "sync"}, want: func(o *options) { o.resolve = "sync" }},
		{name: "no pod events", args: []string{"--pod-events=false"}, want: func(o *options) { o.podEvents = false }},
		{name: "unknown resolve mode", args: []string{"--resolve", "async"}, wantErr: `--resolve "async": want sync, gate or auto`},
		{name: "ELF inference off, or bounded differently", args: []string{"--infer-elf=false", "--infer-elf-max-bytes=1048576", "--infer-elf-timeout=2s"}, want: func(o *options) {
			o.inferELF, o.inferMaxBytes, o.inferTimeout = false, 1<<20, 2*time.Second
		}},
		{name: "zero ELF inference bytes", args: []string{"--infer-elf-max-bytes=0"}, wantErr: "--infer-elf-max-bytes 0"},
		{name: "ELF inference timeout over a minute", args: []string{"--infer-elf-timeout=2m"}, wantErr: "--infer-elf-timeout 2m0s"},
		{name: "zero gate timeout", args: []string{"--gate-timeout", "0s"}, wantErr: "--gate-timeout 0s"},
		{name: "no gate workers", args: []string{"--gate-workers=0"}, wantErr: "--gate-workers 0: want 1..256"},
		{name: "namespace share over the workers", args: []string{"--gate-workers=8", "--gate-workers-per-namespace=9"}, wantErr: "--gate-workers-per-namespace 9: want 0..8"},
		{name: "gate attempt longer than the gate", args: []string{"--gate-timeout=5s", "--gate-attempt=6s"}, wantErr: "--gate-attempt 6s: want a duration in (0, 5s]"},
		{name: "gate workers and attempt", args: []string{"--gate-workers=32", "--gate-workers-per-namespace=2", "--gate-attempt=500ms"}, want: func(o *options) {
			o.gateWorkers, o.gateNSWorkers, o.gateAttempt = 32, 2, 500*time.Millisecond
		}},
		{name: "gate timeout over ten minutes", args: []string{"--gate-timeout", "1h"}, wantErr: "--gate-timeout 1h0m0s"},
		{name: "unknown enforcement", args: []string{"--enforcement", "audit"}, wantErr: `--enforcement "audit": want deny or warn`},
		{name: "port out of range", args: []string{"--port", "70000"}, wantErr: "--port 70000"},
		{name: "budget over the API server timeout", args: []string{"--budget", "11s"}, wantErr: "--budget 11s"},
		{name: "zero budget", args: []string{"--budget", "0s"}, wantErr: "--budget 0s"},
		{name: "negative cache TTL", args: []string{"--cache-ttl", "-1s"}, wantErr: "--cache-ttl -1s"},
		{name: "insecure registry with scheme", args: []string{"--insecure-registry", "http://lab:80"}, wantErr: `"http://lab:80"`},
		{name: "empty insecure registry", args: []string{"--insecure-registry", ""}, wantErr: "empty value"},
		{name: "positional argument", args: []string{"serve"}, wantErr: "unexpected arguments"},
		{name: "unknown flag", args: []string{"--tls-cert", "x"}, wantErr: "flag provided but not defined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.inCluster {
				t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
			} else {
				t.Setenv("KUBERNETES_SERVICE_HOST", "")
			}
			t.Setenv(NamespaceEnv, tc.podNamespace)
			fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			got, err := parseArgs(fs, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseArgs(%q) error = %v, want one mentioning %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tc.args, err)
			}
			want := defaults
			tc.want(&want)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("parseArgs(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// TestNeedsLeader checks that a replica elects a leader whenever it runs
// something one replica only may run, sync mode included.
func TestNeedsLeader(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want bool
	}{
		{name: "defaults", want: true},
		{name: "sync mode: the pod events", args: []string{"--resolve=sync"}, want: true},
		{name: "sync mode without pod events", args: []string{"--resolve=sync", "--pod-events=false"}, want: true},
		{name: "sync mode, nothing on the leader", args: []string{"--resolve=sync", "--pod-events=false", "--misplacement-events=false", "--audit-interval=0"}, want: false},
		{name: "gate controller only", args: []string{"--pod-events=false", "--misplacement-events=false", "--audit-interval=0"}, want: true},
		{name: "misplacement watcher only", args: []string{"--gate-controller=false", "--pod-events=false", "--audit-interval=0"}, want: true},
		{name: "audit only", args: []string{"--gate-controller=false", "--pod-events=false", "--misplacement-events=false"}, want: true},
		{name: "none", args: []string{"--gate-controller=false", "--pod-events=false", "--misplacement-events=false", "--audit-interval=0"}, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o, err := parseArgs(fs, tc.args)
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tc.args, err)
			}
			if got := o.needsLeader(); got != tc.want {
				t.Errorf("needsLeader() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{name: "help", args: []string{"-h"}, want: exitOK},
		{name: "bad flag", args: []string{"--port", "x"}, want: exitUsage},
		{name: "bad value", args: []string{"--budget", "1m"}, want: exitUsage},
		{name: "missing kubeconfig file", args: []string{"--kubeconfig", "/nonexistent/kubeconfig", "--cert-rotation=false"}, want: exitFail},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			if got := run(tc.args, io.Discard, &stderr); got != tc.want {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tc.args, got, tc.want, stderr.String())
			}
		})
	}
}

func TestRunVersion(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run([]string{"--version"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("run(--version) = %d, want %d; stderr: %s", code, exitOK, stderr.String())
	}
	if diff := cmp.Diff("webhook "+buildinfo.Read().String()+"\n", stdout.String()); diff != "" {
		t.Errorf("--version output (-want +got):\n%s", diff)
	}
}
