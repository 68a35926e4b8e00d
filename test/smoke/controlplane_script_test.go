package smoke

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeGo stands in for the go command: it answers the env and list queries
// hack/controlplane.sh makes and "builds" a shell script for each main
// package, named as go build names it, logging one line per go build (the
// packages it built) to $FAKE_GO_LOG.
const fakeGo = `#!/bin/sh
case "$1" in
env)
	case "$2" in
	GOOS) echo linux ;;
	GOARCH) echo amd64 ;;
	GOVERSION) echo go-fake ;;
	*) echo fake ;;
	esac ;;
list)
	case " $* " in
	*" -deps "*) for a in "$@"; do case "$a" in *.*/*) echo "$a" ;; esac; done ;;
	*) echo 2026-01-02T03:04:05Z ;;
	esac ;;
build)
	shift
	pkgs=""
	while [ $# -gt 0 ]; do
		case "$1" in
		-o) out="$2"; shift ;;
		-tags|-ldflags) shift ;;
		-*) ;;
		*) pkgs="$pkgs $1" ;;
		esac
		shift
	done
	for p in $pkgs; do
		name="${p##*/}"
		case "$name" in v[0-9]*) name="$(basename "$(dirname "$p")")" ;; esac
		printf '#!/bin/sh\necho fake\n' >"$out$name"
		chmod +x "$out$name"
		echo "$p" >&2
	done
	echo $pkgs >>"$FAKE_GO_LOG" ;;
esac
`

// TestControlPlaneScript checks hack/controlplane.sh's caching without
// compiling Kubernetes: what it builds, in how many go builds, what it
// reuses and prints, step by step.
func TestControlPlaneScript(t *testing.T) {
	script, err := filepath.Abs("../../hack/controlplane.sh")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(tmp, "home")
	goLog := filepath.Join(tmp, "go.log")
	version := kubeVersion(t)
	nodeVersion := version + "-containerd-" + modVersion(t, "../../hack/containerd/go.mod", "github.com/containerd/containerd/v2")
	// binaryOf names the binary the script makes of a main package.
	binaryOf := func(pkg string) string {
		if pkg == "go.etcd.io/etcd/server/v3" {
			return "etcd"
		}
		return path.Base(pkg)
	}

	run := func(t *testing.T, cache string, args ...string) (dir string, builds [][]string, stderr string, err error) {
		t.Helper()
		_ = os.Remove(goLog)
		cmd := exec.CommandContext(t.Context(), script, args...)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "HOME="+home,
			"ISAMATCH_CACHE="+cache, "FAKE_GO_LOG="+goLog)
		var stdout, errBuf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &errBuf
		err = cmd.Run()
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		if log, err := os.ReadFile(goLog); err == nil {
			for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
				var bins []string
				for _, pkg := range strings.Fields(line) {
					bins = append(bins, binaryOf(pkg))
				}
				builds = append(builds, bins)
			}
		}
		return lines[len(lines)-1], builds, errBuf.String(), err
	}
	all := []string{"etcd", "kube-apiserver", "kube-scheduler"}
	node := []string{"containerd", "containerd-shim-runc-v2", "kubelet", "kube-proxy", "kube-controller-manager", "kubectl"}
	cacheA := filepath.Join(tmp, "a")
	cacheB := filepath.Join(tmp, "b")
	cacheC := filepath.Join(tmp, "c")
	cpDir := func(cache string) string { return filepath.Join(cache, "controlplane", version) }
	nodeDir := func(cache string) string { return filepath.Join(cache, "node", nodeVersion) }
	homeDir := filepath.Join(home, ".cache/isamatch/controlplane", version)
	homeNodeDir := filepath.Join(home, ".cache/isamatch/node", nodeVersion)

	steps := []struct {
		name   string
		cache  string
		args   []string
		before func(t *testing.T)
		// wantBuilds are the binaries of each go build, in order.
		wantBuilds [][]string
		// wantDir is the directory printed; wantHave the binaries it and
		// the home copy must then hold.
		wantDir, wantHomeDir string
		wantHave             []string
	}{
		{name: "cold cache builds all three in one go build", cache: cacheA, wantBuilds: [][]string{all},
			wantDir: cpDir(cacheA), wantHomeDir: homeDir, wantHave: all},
		{name: "warm cache builds nothing", cache: cacheA, wantDir: cpDir(cacheA), wantHomeDir: homeDir, wantHave: all},
		{name: "fresh clone reuses the home copy", cache: cacheB, wantDir: cpDir(cacheB), wantHomeDir: homeDir, wantHave: all},
		{name: "stale stamp everywhere rebuilds", cache: cacheB, wantBuilds: [][]string{all}, before: func(t *testing.T) {
			for _, d := range []string{cpDir(cacheB), homeDir} {
				if err := os.WriteFile(filepath.Join(d, ".stamp"), []byte("old inputs\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}, wantDir: cpDir(cacheB), wantHomeDir: homeDir, wantHave: all},
		{name: "missing binary rebuilds only it", cache: cacheB, wantBuilds: [][]string{{"kube-scheduler"}}, before: func(t *testing.T) {
			for _, d := range []string{cpDir(cacheB), homeDir} {
				if err := os.Remove(filepath.Join(d, "kube-scheduler")); err != nil {
					t.Fatal(err)
				}
			}
		}, wantDir: cpDir(cacheB), wantHomeDir: homeDir, wantHave: all},
		{name: "a named binary of the node set builds alone", cache: cacheC, args: []string{"node", "kube-controller-manager"},
			wantBuilds: [][]string{{"kube-controller-manager"}},
			wantDir:    nodeDir(cacheC), wantHomeDir: homeNodeDir, wantHave: []string{"kube-controller-manager"}},
		{name: "the whole node set then builds the rest, one go build per module", cache: cacheC, args: []string{"node"},
			wantBuilds: [][]string{{"containerd", "containerd-shim-runc-v2"}, {"kubelet", "kube-proxy", "kubectl"}},
			wantDir:    nodeDir(cacheC), wantHomeDir: homeNodeDir, wantHave: node},
		{name: "a fresh clone asking for one binary copies only it", cache: cacheA, args: []string{"node", "kubectl"},
			wantDir: nodeDir(cacheA), wantHomeDir: homeNodeDir, wantHave: []string{"kubectl"}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.before != nil {
				st.before(t)
			}
			dir, builds, stderr, err := run(t, st.cache, st.args...)
			if err != nil {
				t.Fatalf("hack/controlplane.sh %s: %v\nstderr:\n%s", strings.Join(st.args, " "), err, stderr)
			}
			if dir != st.wantDir {
				t.Errorf("last stdout line = %q, want %q", dir, st.wantDir)
			}
			if diff := cmp.Diff(st.wantBuilds, builds); diff != "" {
				t.Errorf("go builds (-want +got):\n%s\nstderr:\n%s", diff, stderr)
			}
			for _, d := range []string{dir, st.wantHomeDir} {
				for _, b := range st.wantHave {
					if st, err := os.Stat(filepath.Join(d, b)); err != nil || st.Mode()&0o111 == 0 {
						t.Errorf("%s/%s missing or not executable (%v)", d, b, err)
					}
				}
			}
			leftovers, _ := filepath.Glob(filepath.Join(st.cache, "*", ".tmp.*"))
			if len(leftovers) > 0 {
				t.Errorf("temporary build directories left behind: %v", leftovers)
			}
		})
	}
	t.Run("a copy holds only what was asked for", func(t *testing.T) {
		if _, err := os.Stat(filepath.Join(nodeDir(cacheA), "kubelet")); !os.IsNotExist(err) {
			t.Errorf("%s/kubelet: %v, want it absent (only kubectl was asked for)", nodeDir(cacheA), err)
		}
	})
	t.Run("an unknown binary is refused", func(t *testing.T) {
		_, builds, stderr, err := run(t, cacheA, "node", "kube-apiserver")
		if err == nil || !strings.Contains(stderr, "kube-apiserver: not a binary of the node set") {
			t.Errorf("hack/controlplane.sh node kube-apiserver: error %v, stderr %q; want a failure naming the binary and the set", err, stderr)
		}
		if len(builds) > 0 {
			t.Errorf("built %v, want nothing", builds)
		}
	})
}

// kubeVersion reads the pinned Kubernetes version from hack/controlplane/go.mod.
func kubeVersion(t *testing.T) string {
	t.Helper()
	return modVersion(t, "../../hack/controlplane/go.mod", "k8s.io/kubernetes")
}

// modVersion reads the version the go.mod at file requires of module.
func modVersion(t *testing.T, file, module string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(strings.TrimPrefix(line, "require "))
		if len(f) >= 2 && f[0] == module {
			return f[1]
		}
	}
	t.Fatalf("no %s requirement in %s", module, file)
	return ""
}
