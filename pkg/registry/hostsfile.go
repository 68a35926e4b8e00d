package registry

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/pelletier/go-toml/v2"
	tomlu "github.com/pelletier/go-toml/v2/unstable"

	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Bounds of a hosts directory (Options.Hosts, [ReadHostsDir]): each is
// checked before what it bounds is parsed.
const (
	// maxHostsFileBytes bounds one hosts.toml; real ones are a few hundred
	// bytes.
	maxHostsFileBytes = 64 << 10
	// maxHostsPerFile bounds the [host."..."] tables of one hosts.toml.
	maxHostsPerFile = 16
	// maxHostsDirs bounds the registry directories (and _default).
	maxHostsDirs = 64
	// maxCAFileBytes bounds one CA file a hosts.toml names.
	maxCAFileBytes = 1 << 20
)

// endpoint is one place a registry's images are read from: a host of a
// hosts.toml, its server, or the registry itself.
type endpoint struct {
	// host is "host" or "host:port" as written in image references.
	host string
	// scheme is "https", or "http" for plain HTTP.
	scheme string
	// path is the API root requests go to: "/v2" unless the hosts.toml
	// gave another (a URL path, or override_path).
	path string
	// resolve and pull are the host's capabilities: a tag is read from
	// hosts that resolve, a digest from hosts that pull.
	resolve, pull bool
	// origin: the image's own registry, read with the reference as the
	// pod spelled it.
	origin bool
	// caFiles are the CA certificates trusted for this host beside the
	// system's; skipVerify turns certificate verification off for it.
	caFiles    []string
	skipVerify bool
	// file is the hosts.toml that named the host, for messages.
	file string
}

// tlsChanged reports whether the endpoint has TLS settings of its own.
func (e endpoint) tlsChanged() bool { return len(e.caFiles) > 0 || e.skipVerify }

// hostsFile is one parsed hosts.toml: its hosts in file order, then its
// server (host "" when the file names none: the registry itself).
type hostsFile struct {
	endpoints []endpoint
	warnings  []string
}

// Keys of a hosts.toml table that containerd reads and the resolver does
// not: warned about, never silently misread.
var unsupportedKeys = map[string]string{
	"client":       "client certificates are not presented; a host that requires them fails and the next one is asked",
	"header":       "the headers are not sent",
	"dial_timeout": "the resolver's own timeouts apply",
}

// parseHostsFile parses data, the hosts.toml at file (its CA paths are
// relative to its directory, as containerd resolves them).
func parseHostsFile(file string, data []byte) (hostsFile, error) {
	if len(data) > maxHostsFileBytes {
		return hostsFile{}, fmt.Errorf("%s: %d bytes, the limit is %d", file, len(data), maxHostsFileBytes)
	}
	order, err := hostOrder(data)
	if err != nil {
		return hostsFile{}, fmt.Errorf("%s: %w", file, err)
	}
	if len(order) > maxHostsPerFile {
		return hostsFile{}, fmt.Errorf("%s: %d [host] tables, the limit is %d", file, len(order), maxHostsPerFile)
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return hostsFile{}, fmt.Errorf("%s:%d:%d: %w", file, row, col, err)
		}
		return hostsFile{}, fmt.Errorf("%s: %w", file, err)
	}
	var out hostsFile
	dir := filepath.Dir(file)
	hosts, _ := doc["host"].(map[string]any)
	if v, ok := doc["host"]; ok && hosts == nil {
		return hostsFile{}, fmt.Errorf("%s: host is a %T, want tables [host.\"https://mirror:5000\"]", file, v)
	}
	if len(hosts) > maxHostsPerFile {
		return hostsFile{}, fmt.Errorf("%s: %d hosts, the limit is %d", file, len(hosts), maxHostsPerFile)
	}
	inOrder := map[string]bool{}
	for _, h := range order {
		inOrder[h] = true
	}
	for _, h := range sortedKeys(hosts) {
		if !inOrder[h] {
			// Order is read from table headers: a host given otherwise
			// would be tried at an unknown place.
			return hostsFile{}, fmt.Errorf("%s: host %q: write it as a table [host.%q] so its place in the order is known", file, sanitize.Line(h, maxRefBytes), h)
		}
	}
	for _, h := range order {
		table, ok := hosts[h].(map[string]any)
		if !ok {
			return hostsFile{}, fmt.Errorf("%s: host %q is a %T, want a table", file, h, hosts[h])
		}
		e, warns, err := parseHost(file, dir, "host."+h, h, table)
		if err != nil {
			return hostsFile{}, err
		}
		out.endpoints = append(out.endpoints, e)
		out.warnings = append(out.warnings, warns...)
	}
	server, ok := doc["server"].(string)
	if v, present := doc["server"]; present && !ok {
		return hostsFile{}, fmt.Errorf("%s: server is a %T, want a string such as \"https://registry.example\"", file, v)
	}
	top := make(map[string]any, len(doc))
	for k, v := range doc {
		if k != "host" && k != "server" {
			top[k] = v
		}
	}
	e, warns, err := parseHost(file, dir, "", server, top)
	if err != nil {
		return hostsFile{}, err
	}
	out.endpoints = append(out.endpoints, e)
	out.warnings = append(out.warnings, warns...)
	return out, nil
}

// parseHost parses the table of one host (key is its key in the file,
// "" for the top level, whose host is the server, "" when not given).
func parseHost(file, dir, key, server string, table map[string]any) (endpoint, []string, error) {
	at := func(k string) string {
		if key == "" {
			return k
		}
		return key + "." + k
	}
	e := endpoint{resolve: true, pull: true, file: file}
	var warnings []string
	override := false
	if v, ok := table["override_path"]; ok {
		b, ok := v.(bool)
		if !ok {
			return e, nil, fmt.Errorf("%s: %s is %v, want true or false", file, at("override_path"), v)
		}
		override = b
	}
	if server != "" {
		if err := e.setURL(server, override); err != nil {
			return e, nil, fmt.Errorf("%s: %s: %w", file, orKey(key, "server"), err)
		}
	}
	for _, k := range sortedKeys(table) {
		v := table[k]
		switch k {
		case "override_path":
		case "capabilities":
			caps, err := stringList(v)
			if err != nil {
				return e, nil, fmt.Errorf("%s: %s: %w", file, at(k), err)
			}
			e.resolve, e.pull = false, false
			for _, c := range caps {
				switch strings.ToLower(c) {
				case "resolve":
					e.resolve = true
				case "pull":
					e.pull = true
				case "push", "referrers":
				default:
					return e, nil, fmt.Errorf("%s: %s: unknown capability %q; want pull, resolve, push or referrers", file, at(k), sanitize.Line(c, 64))
				}
			}
		case "ca":
			files, err := stringList(v)
			if err != nil {
				return e, nil, fmt.Errorf("%s: %s: %w", file, at(k), err)
			}
			for _, f := range files {
				if !filepath.IsAbs(f) {
					f = filepath.Join(dir, f)
				}
				e.caFiles = append(e.caFiles, f)
			}
		case "skip_verify":
			b, ok := v.(bool)
			if !ok {
				return e, nil, fmt.Errorf("%s: %s is %v, want true or false", file, at(k), v)
			}
			e.skipVerify = b
		default:
			why, known := unsupportedKeys[k]
			if !known {
				why = "not a key of containerd's hosts.toml; ignored"
			}
			warnings = append(warnings, fmt.Sprintf("%s: %s is not supported: %s", file, sanitize.Line(at(k), maxRefBytes), why))
		}
	}
	if server == "" && e.tlsChanged() {
		// The registry itself, with TLS settings: known once the
		// directory names the registry (hostsDir.resolveServer).
		e.scheme, e.path = "https", "/v2"
	}
	return e, warnings, nil
}

// setURL sets host, scheme and path from a host key or server value,
// as containerd reads them: no scheme means https, the API root is the
// URL path followed by /v2 unless override_path says the path is the root.
func (e *endpoint) setURL(s string, override bool) error {
	if !strings.HasPrefix(s, "http") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", sanitize.Line(s, maxRefBytes), err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("%q: scheme %q, want https or http", sanitize.Line(s, maxRefBytes), sanitize.Line(u.Scheme, 16))
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q: want scheme://host[:port][/path] without user, query or fragment", sanitize.Line(s, maxRefBytes))
	}
	if _, err := name.NewRegistry(u.Host, name.StrictValidation); err != nil {
		return fmt.Errorf("%q: %q is not a registry host: %w", sanitize.Line(s, maxRefBytes), sanitize.Line(u.Host, maxRefBytes), err)
	}
	e.scheme, e.host = u.Scheme, u.Host
	e.path = "/v2"
	if u.Path != "" && u.Path != "/" {
		e.path = path.Clean(u.Path)
		if !override && !strings.HasSuffix(e.path, "/v2") {
			e.path += "/v2"
		}
	}
	return nil
}

func orKey(key, def string) string {
	if key == "" {
		return def
	}
	return key
}

// stringList reads a string or an array of strings.
func stringList(v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%v is a %T, want a string", x, x)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%v is a %T, want a string or an array of strings", v, v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// hostOrder returns the keys of the [host."..."] tables in file order
// (a TOML map has none, and hosts are tried in the order written).
func hostOrder(data []byte) ([]string, error) {
	var p tomlu.Parser
	p.Reset(data)
	var order []string
	seen := map[string]bool{}
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind != tomlu.Table {
			continue
		}
		var parts []string
		for it := e.Key(); it.Next(); {
			parts = append(parts, string(it.Node().Data))
		}
		// [host."x"] and its subtables such as [host."x".header].
		if len(parts) < 2 || parts[0] != "host" || seen[parts[1]] {
			continue
		}
		seen[parts[1]] = true
		order = append(order, parts[1])
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	return order, nil
}
