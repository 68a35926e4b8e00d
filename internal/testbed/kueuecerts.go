package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// kueueMetricsCertDir is where Kueue reads its metrics certificate whenever
// its own certificate management is off, whatever its configuration says
// (cmd/kueue/main.go of v0.19): it exits at start-up when the files are
// missing, even with the metrics server disabled.
const kueueMetricsCertDir = "/etc/kueue/metrics/certs"

// kueueCommand returns the command that runs the kueue binary with args in a
// private user and mount namespace where /etc is an overlay holding
// kueueMetricsCertDir with certDir's tls.crt and tls.key: Kueue finds its
// certificate and the machine's /etc is never written. Needs unshare
// (util-linux) and overlayfs in user namespaces (Linux 5.11 or later).
func kueueCommand(workDir, certDir, kueue string, args ...string) (string, []string, error) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return "", nil, fmt.Errorf("start kueue: %w: unshare (util-linux) gives Kueue the metrics certificate it reads from %s", err, kueueMetricsCertDir)
	}
	overlay := filepath.Join(workDir, "kueue-etc")
	for _, d := range []string{"upper", "work"} {
		if err := os.MkdirAll(filepath.Join(overlay, d), 0o700); err != nil {
			return "", nil, fmt.Errorf("start kueue: %w", err)
		}
	}
	script := `set -e
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/upper,workdir=$1/work" /etc
mkdir -p ` + kueueMetricsCertDir + `
cp "$2/tls.crt" "$2/tls.key" ` + kueueMetricsCertDir + `/
shift 2
exec "$@"`
	all := append([]string{"--user", "--map-root-user", "--mount", "--propagation", "private",
		"sh", "-c", script, "kueue-start", overlay, certDir, kueue}, args...)
	return unshare, all, nil
}
