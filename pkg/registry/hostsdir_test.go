package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
)

// describe writes an endpoint compactly: "origin" or scheme://host/path,
// then its capabilities and TLS settings.
func describe(e endpoint) string {
	s := e.scheme + "://" + e.host + e.path
	if e.origin {
		s = "origin " + e.host
	}
	var caps []string
	if e.resolve {
		caps = append(caps, "resolve")
	}
	if e.pull {
		caps = append(caps, "pull")
	}
	s += " " + strings.Join(caps, ",")
	for _, f := range e.caFiles {
		s += " ca=" + filepath.Base(f)
	}
	if e.skipVerify {
		s += " skip_verify"
	}
	return s
}

func describeAll(eps []endpoint) []string {
	var out []string
	for _, e := range eps {
		out = append(out, describe(e))
	}
	return out
}

// TestReadHostsDirContainerdExamples reads the examples of containerd's
// docs/hosts.md, each as its own config_path, and checks where each
// registry's images are read from.
func TestReadHostsDirContainerdExamples(t *testing.T) {
	for _, tc := range []struct {
		dir      string
		registry string
		want     []string
		warnings []string
	}{
		{dir: "simple", registry: "index.docker.io", want: []string{
			"origin index.docker.io resolve,pull",
			"origin index.docker.io resolve,pull",
		}},
		{dir: "local-mirror", registry: "index.docker.io", want: []string{
			"https://public-mirror.example.com/v2 pull",
			"https://docker-mirror.internal/v2 resolve,pull ca=docker-mirror.crt",
			"origin index.docker.io resolve,pull",
		}},
		{dir: "local-mirror", registry: "ghcr.io"}, // no directory, no _default
		{dir: "default-mirror", registry: "ghcr.io", want: []string{
			"https://registry.example.com/v2 resolve,pull",
			"origin ghcr.io resolve,pull",
		}},
		{dir: "default-server", registry: "quay.io", want: []string{
			"https://registry.example.com/v2 resolve,pull",
		}},
		{dir: "skip-verify", registry: "index.docker.io", want: []string{
			"http://192.168.31.250:5000/v2 resolve,pull skip_verify",
			"origin index.docker.io resolve,pull",
		}},
		{dir: "ports", registry: "registry.local:5000", want: []string{
			"https://mirror.local/hub/v2 resolve,pull",
			"https://proxy.local/api/v2/registry.local resolve,pull",
			"origin registry.local:5000 resolve,pull",
		}, warnings: []string{
			"host.https://mirror.local/hub.dial_timeout is not supported: the resolver's own timeouts apply",
			"host.https://proxy.local/api/v2/registry.local.client is not supported: client certificates are not presented",
			"host.https://proxy.local/api/v2/registry.local.header is not supported: the headers are not sent",
		}},
	} {
		t.Run(tc.dir+"/"+tc.registry, func(t *testing.T) {
			h, err := ReadHostsDir(filepath.Join("testdata", "hosts", tc.dir))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, describeAll(h.endpoints(tc.registry))); diff != "" {
				t.Errorf("endpoints of %s (-want +got):\n%s", tc.registry, diff)
			}
			if len(h.Warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %d", h.Warnings, len(tc.warnings))
			}
			for i, w := range tc.warnings {
				if !strings.Contains(h.Warnings[i], w) || !strings.Contains(h.Warnings[i], "hosts.toml") {
					t.Errorf("warning %q, want one naming the file and containing %q", h.Warnings[i], w)
				}
			}
		})
	}
}

// TestReadHostsDirCAPath: a relative ca is read from the file's own
// directory, an absolute one as written.
func TestReadHostsDirCAPath(t *testing.T) {
	h, err := ReadHostsDir(filepath.Join("testdata", "hosts", "local-mirror"))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join("testdata", "hosts", "local-mirror", "docker.io", "docker-mirror.crt")
	if got := h.endpoints("index.docker.io")[1].caFiles; len(got) != 1 || got[0] != want {
		t.Errorf("ca files %q, want [%s]", got, want)
	}
	if _, err := NewResolver(Options{Hosts: h}); err != nil {
		t.Errorf("the docs' CA file does not load: %v", err)
	}
}

// writeHosts writes files (path relative to a new directory -> content)
// and returns the directory.
func writeHosts(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, full, []byte(content))
	}
	return dir
}

// TestReadHostsDirErrors: bad and oversized input fails naming the file,
// the value and the limit or what is wanted.
func TestReadHostsDirErrors(t *testing.T) {
	many := ""
	for i := range maxHostsPerFile + 1 {
		many += fmt.Sprintf("[host.\"https://m%d.local\"]\n", i)
	}
	manyDirs := map[string]string{}
	for i := range maxHostsDirs + 1 {
		manyDirs[fmt.Sprintf("r%d.example/hosts.toml", i)] = ""
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		err   string
	}{
		{name: "file too large", files: map[string]string{"a.io/hosts.toml": "# " + strings.Repeat("x", maxHostsFileBytes)},
			err: fmt.Sprintf("a.io/hosts.toml: over %d bytes, the limit is %d", maxHostsFileBytes, maxHostsFileBytes)},
		{name: "too many hosts", files: map[string]string{"a.io/hosts.toml": many},
			err: fmt.Sprintf("a.io/hosts.toml: %d [host] tables, the limit is %d", maxHostsPerFile+1, maxHostsPerFile)},
		{name: "too many directories", files: manyDirs, err: fmt.Sprintf("%d entries, the limit is %d", maxHostsDirs+1, maxHostsDirs)},
		{name: "not TOML", files: map[string]string{"a.io/hosts.toml": "server = \n"}, err: "a.io/hosts.toml"},
		{name: "unknown capability", files: map[string]string{"a.io/hosts.toml": "[host.\"https://m.local\"]\ncapabilities = [\"pul\"]\n"},
			err: `a.io/hosts.toml: host.https://m.local.capabilities: unknown capability "pul"; want pull, resolve, push or referrers`},
		{name: "skip_verify not a bool", files: map[string]string{"a.io/hosts.toml": "skip_verify = \"yes\"\n"},
			err: "a.io/hosts.toml: skip_verify is yes, want true or false"},
		{name: "server not a string", files: map[string]string{"a.io/hosts.toml": "server = 5\n"}, err: "server is a int64"},
		{name: "bad scheme", files: map[string]string{"a.io/hosts.toml": "server = \"httpx://a.io\"\n"}, err: `scheme "httpx", want https or http`},
		{name: "host without a table header", files: map[string]string{"a.io/hosts.toml": "host.\"https://m.local\".capabilities = [\"pull\"]\n"},
			err: `host "https://m.local": write it as a table`},
		{name: "bad directory name", files: map[string]string{"a io/hosts.toml": ""}, err: `"a io" is not a registry host`},
		{name: "one registry twice", files: map[string]string{"r.local:5000/hosts.toml": "", "r.local_5000_/hosts.toml": ""},
			err: "both configure registry r.local:5000"},
		{name: "CA file without a certificate", files: map[string]string{"a.io/hosts.toml": "[host.\"https://m.local\"]\nca = \"m.crt\"\n", "a.io/m.crt": "not PEM"},
			err: "a.io/hosts.toml: host m.local: ca"},
		{name: "CA file missing", files: map[string]string{"a.io/hosts.toml": "[host.\"https://m.local\"]\nca = \"/nonexistent/m.crt\"\n"},
			err: "/nonexistent/m.crt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := ReadHostsDir(writeHosts(t, tc.files))
			if err == nil {
				_, err = NewResolver(Options{Hosts: h})
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error = %v, want one containing %q", err, tc.err)
			}
		})
	}
}

// TestHostsDirWithMirrorFlag: a registry in both --registry-mirror and the
// hosts directory is refused, naming it; _default yields to the flag.
func TestHostsDirWithMirrorFlag(t *testing.T) {
	h, err := ReadHostsDir(writeHosts(t, map[string]string{
		"docker.io/hosts.toml": "[host.\"https://hub-mirror.local\"]\n",
		"_default/hosts.toml":  "[host.\"https://any-mirror.local\"]\n",
	}))
	if err != nil {
		t.Fatal(err)
	}
	err = Options{Hosts: h, Mirrors: []string{"docker.io=m.local"}}.Validate()
	if want := "registry index.docker.io is mirrored by m.local in Mirrors (--registry-mirror) and has a directory in the hosts dir"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Validate = %v, want %q", err, want)
	}
	r := newResolver(t, Options{Hosts: h, Mirrors: []string{"ghcr.io=m.local"}})
	ref := mustParse(t, "ghcr.io/app/x:1")
	if diff := cmp.Diff([]string{"https://m.local/v2 resolve,pull", "origin ghcr.io resolve,pull"}, describeAll(r.endpointsOf(ref))); diff != "" {
		t.Errorf("ghcr.io endpoints (-want +got):\n%s", diff)
	}
}

func mustParse(t *testing.T, ref string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReadHostsDirConfigMapVolume reads the layout the kubelet writes for a
// ConfigMap volume with items: the files under a timestamped directory,
// ..data linking to it, and each top-level entry a link into ..data.
func TestReadHostsDirConfigMapVolume(t *testing.T) {
	dir := writeHosts(t, map[string]string{
		"..2026_11_27_02_40_00.123/docker.io/hosts.toml": "[host.\"https://hub-mirror.local\"]\n",
		"..2026_11_27_02_40_00.123/_default/hosts.toml":  "",
	})
	if err := os.Symlink("..2026_11_27_02_40_00.123", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"docker.io", "_default"} {
		if err := os.Symlink(filepath.Join("..data", d), filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := ReadHostsDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Warnings) > 0 {
		t.Errorf("warnings: %q", h.Warnings)
	}
	if diff := cmp.Diff([]string{"https://hub-mirror.local/v2 resolve,pull", "origin index.docker.io resolve,pull"}, describeAll(h.endpoints("index.docker.io"))); diff != "" {
		t.Errorf("Docker Hub endpoints (-want +got):\n%s", diff)
	}
}
