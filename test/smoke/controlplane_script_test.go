package smoke

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeGo stands in for the go command: it answers the env and list queries
// hack/controlplane.sh makes and "builds" a shell script for each binary,
// logging what it built to $FAKE_GO_LOG.
const fakeGo = `#!/bin/sh
case "$1" in
env)
	case "$2" in
	GOOS) echo linux ;;
	GOARCH) echo amd64 ;;
	GOVERSION) echo go-fake ;;
	*) echo fake ;;
	esac ;;
list) echo 2026-01-02T03:04:05Z ;;
build)
	while [ $# -gt 0 ]; do
		if [ "$1" = -o ]; then out="$2"; shift; fi
		shift
	done
	printf '#!/bin/sh\necho fake\n' >"$out"
	chmod +x "$out"
	basename "$out" >>"$FAKE_GO_LOG" ;;
esac
`

// TestControlPlaneScript checks hack/controlplane.sh's caching without
// compiling Kubernetes: what it builds, reuses and prints, step by step.
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
	homeDir := filepath.Join(home, ".cache/isamatch/controlplane", version)

	run := func(t *testing.T, cache string) (dir string, built []string) {
		t.Helper()
		_ = os.Remove(goLog)
		cmd := exec.CommandContext(t.Context(), script)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "HOME="+home,
			"ISAMATCH_CACHE="+cache, "FAKE_GO_LOG="+goLog)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("hack/controlplane.sh: %v\nstderr:\n%s", err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		if log, err := os.ReadFile(goLog); err == nil {
			built = strings.Fields(string(log))
		}
		return lines[len(lines)-1], built
	}
	all := []string{"etcd", "kube-apiserver", "kube-scheduler"}
	cacheA := filepath.Join(tmp, "a")
	cacheB := filepath.Join(tmp, "b")

	steps := []struct {
		name      string
		cache     string
		before    func(t *testing.T)
		wantBuilt []string
	}{
		{name: "cold cache builds all three", cache: cacheA, wantBuilt: all},
		{name: "warm cache builds nothing", cache: cacheA},
		{name: "fresh clone reuses the home copy", cache: cacheB},
		{name: "stale stamp everywhere rebuilds", cache: cacheB, wantBuilt: all, before: func(t *testing.T) {
			for _, d := range []string{filepath.Join(cacheB, "controlplane", version), homeDir} {
				if err := os.WriteFile(filepath.Join(d, ".stamp"), []byte("old inputs\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{name: "missing binary rebuilds", cache: cacheB, wantBuilt: all, before: func(t *testing.T) {
			if err := os.Remove(filepath.Join(cacheB, "controlplane", version, "kube-scheduler")); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(homeDir, "kube-scheduler")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.before != nil {
				st.before(t)
			}
			dir, built := run(t, st.cache)
			if want := filepath.Join(st.cache, "controlplane", version); dir != want {
				t.Errorf("last stdout line = %q, want %q", dir, want)
			}
			if diff := cmp.Diff(st.wantBuilt, built); diff != "" {
				t.Errorf("binaries built (-want +got):\n%s", diff)
			}
			for _, d := range []string{dir, homeDir} {
				for _, b := range all {
					if st, err := os.Stat(filepath.Join(d, b)); err != nil || st.Mode()&0o111 == 0 {
						t.Errorf("%s/%s missing or not executable (%v)", d, b, err)
					}
				}
			}
			leftovers, _ := filepath.Glob(filepath.Join(st.cache, "controlplane", ".tmp.*"))
			if len(leftovers) > 0 {
				t.Errorf("temporary build directories left behind: %v", leftovers)
			}
		})
	}
}

// kubeVersion reads the pinned Kubernetes version from hack/controlplane/go.mod.
func kubeVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../hack/controlplane/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "k8s.io/kubernetes" {
			return f[1]
		}
	}
	t.Fatal("no k8s.io/kubernetes requirement in hack/controlplane/go.mod")
	return ""
}
