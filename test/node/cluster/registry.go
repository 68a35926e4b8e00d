package cluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/isamatch/isamatch/internal/testbed"
)

// Registry is Debian's docker-registry serving plain HTTP without
// authentication on the node address, where containerd (on the host) and
// the webhook (in a pod) both reach it. Like a lab registry: the suite
// points containerd's hosts.toml and the webhook's --insecure-registry at it.
type Registry struct {
	// Host is "NODEIP:PORT".
	Host    string
	Process *testbed.Process
}

// StartRegistry runs docker-registry on ip with its storage and log in dir.
func StartRegistry(ctx context.Context, ip, dir string) (*Registry, error) {
	bin, err := exec.LookPath(testbed.RegistryPackage)
	if err != nil {
		bin = "/usr/bin/docker-registry"
		if !executable(bin) {
			return nil, &Missing{What: "docker-registry not found", Fix: "hack/deps.sh (apt-get install " + testbed.RegistryPackage + ")"}
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create registry dir: %w", err)
	}
	r := &Registry{}
	err = testbed.StartOnFreePorts(1, func(ports []int) error {
		r.Host = net.JoinHostPort(ip, strconv.Itoa(ports[0]))
		config, err := writeFile(dir, "config.yml", fmt.Appendf(nil, `version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: %s
health:
  storagedriver:
    enabled: false
`, filepath.Join(dir, "data"), r.Host))
		if err != nil {
			return err
		}
		p, err := testbed.StartProcess("docker-registry", bin, []string{"serve", config}, nil, filepath.Join(dir, "registry.log"))
		if err != nil {
			return err
		}
		if err := p.WaitHTTP(ctx, "http://"+r.Host+"/v2/", nil, 30*time.Second, func(s int) bool { return s == http.StatusOK }); err != nil {
			_ = p.Stop(10 * time.Second)
			return err
		}
		r.Process = p
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Stop stops the registry.
func (r *Registry) Stop() error {
	if r == nil || r.Process == nil {
		return nil
	}
	return r.Process.Stop(10 * time.Second)
}
