package registry

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Hosts is a containerd hosts directory (config_path) as the resolver
// reads it, made by [ReadHostsDir]: for each registry, the hosts its images
// are read from, in order, ending with its server.
type Hosts struct {
	// registries holds the endpoints of each registry directory, by the
	// registry as name.Registry spells it ("index.docker.io" for Docker
	// Hub).
	registries map[string][]endpoint
	// fallback are _default's endpoints; its server is "" when the file
	// names none (the registry itself). Nil without _default.
	fallback []endpoint
	// Warnings name, with their file, the keys read and not supported and
	// the entries of the directory ignored. Log them.
	Warnings []string
}

// defaultDir is the directory whose hosts.toml applies to registries
// without a directory of their own.
const defaultDir = "_default"

// dockerHubAliases are the hosts of Docker Hub's own registry, which
// name.Registry spells index.docker.io and containerd registry-1.docker.io.
var dockerHubAliases = []string{"docker.io", "index.docker.io", "registry-1.docker.io"}

// ReadHostsDir reads dir laid out as containerd's config_path
// (/etc/containerd/certs.d): DIR/<registry>/hosts.toml, <registry> being
// "host", "host:port" or containerd's "host_port_", and
// DIR/_default/hosts.toml for the others. Each file gives the hosts tried in
// file order, then its server (the registry itself unless given; for
// docker.io, Docker Hub's registry). It reads the files once: a change
// takes effect on restart. Entries whose names start with "." (such as a
// ConfigMap volume's ..data) are skipped.
func ReadHostsDir(dir string) (*Hosts, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read registry hosts dir: %w", err)
	}
	h := &Hosts{registries: map[string][]endpoint{}}
	var dirs []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) > maxHostsDirs {
		return nil, fmt.Errorf("registry hosts dir %s: %d entries, the limit is %d", dir, len(dirs), maxHostsDirs)
	}
	from := map[string]string{} // registry -> its directory
	for _, d := range dirs {
		path := filepath.Join(dir, d)
		// Stat, not the entry's type: a ConfigMap volume's entries are
		// symbolic links.
		if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
			h.Warnings = append(h.Warnings, fmt.Sprintf("%s: not a directory; ignored (want %s/<registry>/hosts.toml)", path, dir))
			continue
		}
		registry := ""
		if d != defaultDir {
			r, err := name.NewRegistry(hostOfDir(d))
			if err != nil {
				return nil, fmt.Errorf("registry hosts dir %s: %q is not a registry host (want host, host:port or host_port_): %w", dir, sanitize.Line(d, maxRefBytes), err)
			}
			registry = r.RegistryStr()
			if prev, ok := from[registry]; ok {
				return nil, fmt.Errorf("registry hosts dir %s: %s and %s both configure registry %s; keep one", dir, prev, d, registry)
			}
			from[registry] = d
		}
		file := filepath.Join(path, "hosts.toml")
		data, err := readBounded(file, maxHostsFileBytes)
		if errors.Is(err, os.ErrNotExist) {
			h.Warnings = append(h.Warnings, fmt.Sprintf("%s: no hosts.toml; the Docker certs.d files containerd would read there (*.crt, *.cert, *.key) are not read", path))
			if registry != "" {
				h.registries[registry] = []endpoint{originOf(registry)}
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		f, err := parseHostsFile(file, data)
		if err != nil {
			return nil, err
		}
		h.Warnings = append(h.Warnings, f.warnings...)
		if registry == "" {
			last := &f.endpoints[len(f.endpoints)-1]
			if last.host == "" && last.tlsChanged() {
				h.Warnings = append(h.Warnings, fmt.Sprintf("%s: top-level ca and skip_verify would apply to every registry's own server; ignored (give them in the registry's own directory)", file))
				last.caFiles, last.skipVerify = nil, false
			}
			h.fallback = f.endpoints
			continue
		}
		h.registries[registry] = serverResolved(f.endpoints, registry)
	}
	return h, nil
}

// hostOfDir is the registry host a directory name stands for: containerd's
// "host_port_" is "host:port".
func hostOfDir(d string) string {
	if rest, ok := strings.CutSuffix(d, "_"); ok {
		if i := strings.LastIndex(rest, "_"); i > 0 {
			return rest[:i] + ":" + rest[i+1:]
		}
	}
	return d
}

// serverResolved marks the endpoints of registry that are the registry
// itself (its server when the file names none; Docker Hub under any name).
func serverResolved(eps []endpoint, registry string) []endpoint {
	out := slices.Clone(eps)
	for i := range out {
		e := &out[i]
		if e.host == "" {
			e.host, e.scheme, e.path, e.origin = registry, "https", "/v2", true
			continue
		}
		same := e.host == registry || (registry == name.DefaultRegistry && slices.Contains(dockerHubAliases, e.host))
		if same && e.scheme == "https" && e.path == "/v2" {
			e.host, e.origin = registry, true
		}
	}
	return out
}

// endpoints returns where the images of registry are read from, in order,
// or nil when the directory says nothing of it.
func (h *Hosts) endpoints(registry string) []endpoint {
	if h == nil {
		return nil
	}
	if eps, ok := h.registries[registry]; ok {
		return eps
	}
	if h.fallback == nil {
		return nil
	}
	return serverResolved(h.fallback, registry)
}

// Registries returns the registries with a directory of their own, as
// name.Registry spells them (index.docker.io for docker.io), sorted.
func (h *Hosts) Registries() []string {
	if h == nil {
		return nil
	}
	out := make([]string, 0, len(h.registries))
	for r := range h.registries {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// all returns every endpoint named, _default's included, with the file
// that named it.
func (h *Hosts) all() []endpoint {
	if h == nil {
		return nil
	}
	var out []endpoint
	for _, r := range h.Registries() {
		out = append(out, h.registries[r]...)
	}
	for _, e := range h.fallback {
		if e.host != "" {
			out = append(out, e)
		}
	}
	return out
}

// readBounded reads file, refusing one over limit bytes before reading
// it whole.
func readBounded(file string, limit int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: over %d bytes, the limit is %d", file, limit, limit)
	}
	return data, nil
}
