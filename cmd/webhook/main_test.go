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
		eventsQPS:       10,
		eventsBurst:     50,
		misplaceEvents:  true,
		auditInterval:   time.Minute,
		evictGrace:      time.Minute,
		qps:             50,
		burst:           100,
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
		name string
		// config is the body of a --config file (none when empty), args
		// the flags besides.
		config    string
		args      []string
		inCluster bool
		// podNamespace is $POD_NAMESPACE (the downward API).
		podNamespace string
		want         func(o *options)
		wantErr      string
	}{
		{name: "defaults out of cluster", want: func(o *options) {}},
		{name: "namespace from the downward API", podNamespace: "platform-isa", want: func(o *options) { o.namespace = "platform-isa" }},
		{name: "file over the downward API", podNamespace: "platform-isa", config: "namespace: other", want: func(o *options) { o.namespace = "other" }},
		{name: "defaults in cluster rotate certificates", inCluster: true, want: func(o *options) { o.certRotation = true }},
		{name: "rotation can be turned off in cluster", inCluster: true, config: "server: {certRotation: false}", want: func(o *options) {}},
		{name: "everything", args: []string{"--kubeconfig", "/k/config", "-v", "1"}, config: `
namespace: other
server: {certDir: /certs, port: 10443, certRotation: true, enableHTTP2: true}
metrics: {bindAddress: "0"}
health: {bindAddress: ":9000"}
registry: {caFile: /ca.pem, insecureRegistries: ["127.0.0.1:5000", "lab:80"], cacheTTL: 1m}
admission: {budget: 3s}
`, want: func(o *options) {
			o.enableHTTP2 = true
			o.kubeconfig, o.certDir, o.port = "/k/config", "/certs", 10443
			o.metricsAddr, o.probeAddr, o.registryCA = "0", ":9000", "/ca.pem"
			o.insecureRegistries = stringList{"127.0.0.1:5000", "lab:80"}
			o.cacheTTL, o.budget, o.certRotation, o.namespace, o.verbosity = time.Minute, 3*time.Second, true, "other", 1
		}},
		{name: "registry limits", config: `registry: {allowRegistries: ["registry.lab:5000", 10.0.0.0/8], maxPerHost: 2, maxPerNamespace: 3, maxIndexEntries: 16, maxBytes: 1048576, cacheBytes: 1000000}`,
			want: func(o *options) {
				o.allowRegistries = stringList{"registry.lab:5000", "10.0.0.0/8"}
				o.perHost, o.perNamespace, o.maxIndexEntries, o.maxResolution, o.cacheBytes = 2, 3, 16, 1<<20, 1000000
			}},
		{name: "plugin concurrency", config: "credentialProviders: {maxRuns: 4, maxRunsPerNamespace: 4}", want: func(o *options) {
			o.pluginRuns, o.pluginRunsPerNS = 4, 4
		}},
		{name: "plugin runs per namespace above the total", config: "credentialProviders: {maxRuns: 4, maxRunsPerNamespace: 5}",
			wantErr: "credentialProviders.maxRunsPerNamespace: Invalid value: 5: want 1..4 (credentialProviders.maxRuns)"},
		{name: "evict needs the watcher", config: "misplacement: {evict: true, events: false}", wantErr: "misplacement.evict: Invalid value: true: needs misplacement.events: the watcher finds the pods it evicts"},
		{name: "audit too often", config: "audit: {interval: 1s}", wantErr: `audit.interval: Invalid value: "1s": want 0 (off) or at least 10s`},
		{name: "audit off, eviction on", config: "audit: {interval: 0s}\nmisplacement: {evict: true}", want: func(o *options) { o.auditInterval, o.evictMisplaced = 0, true }},
		{name: "eviction grace", config: "misplacement: {evict: true, evictGrace: 15s}", want: func(o *options) { o.evictMisplaced, o.evictGrace = true, 15*time.Second }},
		{name: "client rate limit", config: "clientConnection: {qps: 200, burst: 400}", want: func(o *options) { o.qps, o.burst = 200, 400 }},
		{name: "Events pace", config: "events: {pods: true, qps: 2.5, burst: 5}", want: func(o *options) { o.eventsQPS, o.eventsBurst = 2.5, 5 }},
		{name: "Events pace within the client's", config: "events: {pods: true, qps: 80, burst: 50}\nclientConnection: {qps: 40, burst: 100}", want: func(o *options) { o.eventsQPS, o.eventsBurst, o.qps, o.burst = 40, 50, 40, 100 }},
		{name: "plugin runs 0", config: "credentialProviders: {maxRuns: 0}", wantErr: "credentialProviders.maxRuns: Invalid value: 0: want 1..64"},
		{name: "bare keys off", config: "admission: {bareKeys: false}", want: func(o *options) { o.bareKeys = false }},
		{name: "metrics audience", config: "metrics: {tokenAudience: prometheus.example/isamatch}", want: func(o *options) { o.metricsAudience = "prometheus.example/isamatch" }},
		{name: "metrics audience empty", config: `metrics: {tokenAudience: ""}`, wantErr: `metrics.tokenAudience: Invalid value: token audience "": want 1..253 characters`},
		{name: "cluster networks", config: `registry: {clusterNetworks: [10.244.0.0/16, "fd00:10:96::/108"]}`, want: func(o *options) {
			o.clusterNetworks = stringList{"10.244.0.0/16", "fd00:10:96::/108"}
		}},
		{name: "cluster network not a CIDR", config: "registry: {clusterNetworks: [10.96.0.0/40]}", wantErr: `cluster network "10.96.0.0/40": not a CIDR`},
		{name: "allowed registry not a CIDR", config: "registry: {allowRegistries: [10.0.0.0/40]}", wantErr: `allowed registry "10.0.0.0/40"`},
		{name: "zero per-namespace slots", config: "registry: {maxPerNamespace: 0}", wantErr: "registry.maxPerNamespace: Invalid value: 0: want a number >= 1"},
		{name: "client CA and plain HTTP metrics", config: "server: {clientCAFile: /ca/client-ca.crt}\nmetrics: {secure: false}", want: func(o *options) {
			o.clientCAFile, o.metricsSecure = "/ca/client-ca.crt", false
		}},
		{name: "credential providers", config: "credentialProviders: {config: /etc/cp/config.yaml, binDir: /cp/bin}", want: func(o *options) {
			o.credProviderConfig, o.credProviderBinDir = "/etc/cp/config.yaml", "/cp/bin"
		}},
		{name: "credential provider timeout and digest cache", config: "credentialProviders: {timeout: 1m}\nregistry: {digestCacheBytes: 1048576}", want: func(o *options) {
			o.pluginTimeout, o.digestCacheBytes = time.Minute, 1<<20
		}},
		{name: "zero credential provider timeout", config: "credentialProviders: {timeout: 0s}",
			wantErr: `credentialProviders.timeout: Invalid value: "0s": want a duration in (0, 1m]`},
		{name: "negative credential provider timeout", config: "credentialProviders: {timeout: -1s}",
			wantErr: `credentialProviders.timeout: Invalid value: "-1s": want a duration in (0, 1m]`},
		{name: "credential provider timeout over the kubelet's", config: "credentialProviders: {timeout: 61s}",
			wantErr: `credentialProviders.timeout: Invalid value: "1m1s": want a duration in (0, 1m]`},
		{name: "zero digest cache", config: "registry: {digestCacheBytes: 0}", wantErr: "registry.digestCacheBytes: Invalid value: 0: want a number >= 1"},
		{name: "digest cache not a number", config: "registry: {digestCacheBytes: 16MiB}", wantErr: `registry.digestCacheBytes`},
		{name: "credential provider config without bin dir", config: "credentialProviders: {config: /etc/cp/config.yaml}",
			wantErr: "credentialProviders.config and credentialProviders.binDir go together"},
		{name: "credential provider bin dir without config", config: "credentialProviders: {binDir: /cp/bin}",
			wantErr: "credentialProviders.config and credentialProviders.binDir go together"},
		{name: "mirrors and pull secrets", config: `registry: {mirrors: ["docker.io=mirror.local:5000", "ghcr.io=10.0.0.5"], pullSecrets: true}`, want: func(o *options) {
			o.mirrors, o.pullSecrets = stringList{"docker.io=mirror.local:5000", "ghcr.io=10.0.0.5"}, true
		}},
		{name: "hosts dir beside a mirror", config: `registry: {hostsDir: /etc/isamatch/registry-hosts, mirrors: ["ghcr.io=10.0.0.5"]}`, want: func(o *options) {
			o.hostsDir, o.mirrors = "/etc/isamatch/registry-hosts", stringList{"ghcr.io=10.0.0.5"}
		}},
		{name: "malformed mirror", config: `registry: {mirrors: ["mirror.local:5000"]}`, wantErr: `mirror "mirror.local:5000": want REGISTRY=MIRROR`},
		{name: "mirror with a scheme", config: `registry: {mirrors: ["docker.io=http://m.local"]}`, wantErr: `"http://m.local": want a host or host:port without scheme or path`},
		{name: "warn mode", config: "admission: {enforcement: warn}", want: func(o *options) { o.enforcement = "warn" }},
		{name: "namespaces may choose warn only", config: "admission: {namespaceEnforcement: [warn]}", want: func(o *options) { o.nsModes = []string{"warn"} }},
		{name: "namespaces may not choose", config: "admission: {namespaceEnforcement: []}", want: func(o *options) { o.nsModes = nil }},
		{name: "namespace mode that is no mode", config: "admission: {namespaceEnforcement: [deny, audit]}", wantErr: `admission.namespaceEnforcement: Invalid value: "deny,audit": "audit" is not a mode`},
		{name: "gate mode without the controller", config: "admission: {resolve: gate}\ngate: {timeout: 5s, controller: false}\nleaderElection: {enabled: false}", want: func(o *options) {
			o.resolve, o.gateTimeout, o.gateController, o.leaderElect = "gate", 5*time.Second, false, false
		}},
		{name: "QEMU_CPU injection off", config: "admission: {qemuCPU: \"off\"}", want: func(o *options) { o.qemuCPU = "off" }},
		{name: "QEMU_CPU mode unknown", config: "admission: {qemuCPU: \"on\"}", wantErr: `admission.qemuCPU: Invalid value: "on": want inject or off`},
		{name: "fallback architecture", config: "admission: {fallbackArchitecture: arm64}", want: func(o *options) { o.fallbackArch = "arm64" }},
		{name: "unknown fallback architecture", config: "admission: {fallbackArchitecture: x86_64}", wantErr: `fallback architecture "x86_64": want one of amd64, arm64, riscv64, or empty for none`},
		{name: "sync mode", config: "admission: {resolve: sync}", want: func(o *options) { o.resolve = "sync" }},
		{name: "no pod events", config: "events: {pods: false}", want: func(o *options) { o.podEvents = false }},
		{name: "unknown resolve mode", config: "admission: {resolve: async}", wantErr: `admission.resolve: Invalid value: "async": want sync, gate or auto`},
		{name: "ELF inference off, or bounded differently", config: "inference: {elf: false, maxBytes: 1048576, timeout: 2s}", want: func(o *options) {
			o.inferELF, o.inferMaxBytes, o.inferTimeout = false, 1<<20, 2*time.Second
		}},
		{name: "zero ELF inference bytes", config: "inference: {maxBytes: 0}", wantErr: "inference.maxBytes: Invalid value: 0"},
		{name: "ELF inference timeout over a minute", config: "inference: {timeout: 2m}", wantErr: `inference.timeout: Invalid value: "2m0s"`},
		{name: "zero gate timeout", config: "gate: {timeout: 0s}", wantErr: `gate.timeout: Invalid value: "0s"`},
		{name: "no gate workers", config: "gate: {workers: 0}", wantErr: "gate.workers: Invalid value: 0: want 1..256"},
		{name: "namespace share over the workers", config: "gate: {workers: 8, workersPerNamespace: 9}", wantErr: "gate.workersPerNamespace: Invalid value: 9: want 0..8"},
		{name: "gate attempt longer than the gate", config: "gate: {timeout: 5s, attempt: 6s}", wantErr: `gate.attempt: Invalid value: "6s": want a duration in (0, 5s]`},
		{name: "gate workers and attempt", config: "gate: {workers: 32, workersPerNamespace: 2, attempt: 500ms}", want: func(o *options) {
			o.gateWorkers, o.gateNSWorkers, o.gateAttempt = 32, 2, 500*time.Millisecond
		}},
		{name: "gate timeout over ten minutes", config: "gate: {timeout: 1h}", wantErr: `gate.timeout: Invalid value: "1h0m0s"`},
		{name: "unknown enforcement", config: "admission: {enforcement: audit}", wantErr: `admission.enforcement: Invalid value: "audit": want deny or warn`},
		{name: "port out of range", config: "server: {port: 70000}", wantErr: "server.port: Invalid value: 70000"},
		{name: "budget over the API server timeout", config: "admission: {budget: 11s}", wantErr: `admission.budget: Invalid value: "11s"`},
		{name: "zero budget", config: "admission: {budget: 0s}", wantErr: `admission.budget: Invalid value: "0s"`},
		{name: "negative cache TTL", config: "registry: {cacheTTL: -1s}", wantErr: `registry.cacheTTL: Invalid value: "-1s"`},
		{name: "insecure registry with scheme", config: `registry: {insecureRegistries: ["http://lab:80"]}`, wantErr: `"http://lab:80"`},
		{name: "empty insecure registry", config: `registry: {insecureRegistries: [""]}`, wantErr: "registry.insecureRegistries[0]"},
		{name: "positional argument", args: []string{"serve"}, wantErr: "unexpected arguments"},
		{name: "unknown flag", args: []string{"--tls-cert", "x"}, wantErr: "flag provided but not defined"},
		{name: "removed flag", args: []string{"--gate-timeout", "5s"}, wantErr: "flag --gate-timeout was removed: set gate.timeout in the file --config names (docs/configuration.md)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.inCluster {
				t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
			} else {
				t.Setenv("KUBERNETES_SERVICE_HOST", "")
			}
			t.Setenv(NamespaceEnv, tc.podNamespace)
			args := tc.args
			var file string
			if tc.config != "" {
				file = writeConfig(t, tc.config+"\n")
				args = append([]string{"--config", file}, args...)
			}
			fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			got, err := parseArgs(fs, args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseArgs(%q) with\n%s\nerror = %v, want one mentioning %q", args, tc.config, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseArgs(%q) with\n%s\n: %v", args, tc.config, err)
			}
			want := defaults
			want.configFile = file
			tc.want(&want)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("parseArgs(%q) (-want +got):\n%s", args, diff)
			}
		})
	}
}

// TestNeedsLeader checks that a replica elects a leader whenever it runs
// something one replica only may run, sync mode included.
func TestNeedsLeader(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   bool
	}{
		{name: "defaults", want: true},
		{name: "sync mode: the pod events", config: "admission: {resolve: sync}", want: true},
		{name: "sync mode without pod events", config: "admission: {resolve: sync}\nevents: {pods: false}", want: true},
		{name: "sync mode, nothing on the leader", config: "admission: {resolve: sync}\nevents: {pods: false}\nmisplacement: {events: false}\naudit: {interval: 0s}", want: false},
		{name: "gate controller only", config: "events: {pods: false}\nmisplacement: {events: false}\naudit: {interval: 0s}", want: true},
		{name: "misplacement watcher only", config: "gate: {controller: false}\nevents: {pods: false}\naudit: {interval: 0s}", want: true},
		{name: "audit only", config: "gate: {controller: false}\nevents: {pods: false}\nmisplacement: {events: false}", want: true},
		{name: "none", config: "gate: {controller: false}\nevents: {pods: false}\nmisplacement: {events: false}\naudit: {interval: 0s}", want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o, err := parseArgs(fs, []string{"--config", writeConfig(t, tc.config+"\n")})
			if err != nil {
				t.Fatalf("parseArgs with\n%s\n: %v", tc.config, err)
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
		{name: "bad flag", args: []string{"--frob", "x"}, want: exitUsage},
		{name: "removed flag", args: []string{"--port", "10443"}, want: exitUsage},
		{name: "bad value", args: []string{"--config", writeConfig(t, "admission: {budget: 1m}\n")}, want: exitUsage},
		{name: "missing kubeconfig file", args: []string{"--kubeconfig", "/nonexistent/kubeconfig", "--config", writeConfig(t, "server: {certRotation: false}\n")}, want: exitFail},
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
