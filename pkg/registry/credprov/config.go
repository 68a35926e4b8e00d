package credprov

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/pkg/sanitize"
)

// The API versions of the kubelet's credential provider protocol: the
// CredentialProviderConfig file (as --image-credential-provider-config
// reads it) and the CredentialProviderRequest/Response a plugin exchanges.
// All of them share one wire shape; v1 is the one to write.
var (
	credentialConfigVersions = []string{
		"kubelet.config.k8s.io/v1", "kubelet.config.k8s.io/v1beta1", "kubelet.config.k8s.io/v1alpha1",
	}
	credentialPluginVersions = []string{
		"credentialprovider.kubelet.k8s.io/v1", "credentialprovider.kubelet.k8s.io/v1beta1", "credentialprovider.kubelet.k8s.io/v1alpha1",
	}
)

// maxCredentialConfigBytes bounds one credential provider config file.
const maxCredentialConfigBytes = 1 << 20

// maxCredentialProviders bounds the providers of one config.
const maxCredentialProviders = 64

// credentialProvider is one validated provider of the config.
type credentialProvider struct {
	name         string
	path         string // the executable, inside the bin dir
	apiVersion   string
	matchImages  []string
	defaultCache time.Duration
	args         []string
	env          []string // NAME=value, after the webhook's own environment
}

// loadCredentialProviderConfig reads the kubelet's CredentialProviderConfig
// from path (a file, or a directory whose *.json, *.yaml and *.yml files are
// read in lexical order, as the kubelet does) and checks every provider and
// its executable in binDir.
func loadCredentialProviderConfig(path, binDir string) ([]credentialProvider, error) {
	if binDir == "" {
		return nil, errors.New("credential provider bin dir is empty: name the directory holding the plugin executables")
	}
	if fi, err := os.Stat(binDir); err != nil {
		return nil, fmt.Errorf("credential provider bin dir: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("credential provider bin dir %s is not a directory", binDir)
	}
	files, err := credentialConfigFiles(path)
	if err != nil {
		return nil, err
	}
	var providers []credentialProvider
	seen := map[string]string{}
	for _, file := range files {
		cfg, err := decodeCredentialConfig(file)
		if err != nil {
			return nil, err
		}
		for i, p := range cfg.Providers {
			field := fmt.Sprintf("%s: providers[%d]", file, i)
			if prev, dup := seen[p.Name]; dup {
				return nil, fmt.Errorf("%s.name %q: already the name of %s; each provider needs its own name", field, p.Name, prev)
			}
			seen[p.Name] = field
			cp, err := checkCredentialProvider(p, binDir)
			if err != nil {
				return nil, fmt.Errorf("%s%w", field, err)
			}
			providers = append(providers, cp)
		}
	}
	if len(providers) == 0 {
		return nil, fmt.Errorf("credential provider config %s: no providers: list at least one", path)
	}
	if len(providers) > maxCredentialProviders {
		return nil, fmt.Errorf("credential provider config %s: %d providers, at most %d", path, len(providers), maxCredentialProviders)
	}
	return providers, nil
}

func credentialConfigFiles(path string) ([]string, error) {
	if path == "" {
		return nil, errors.New("credential provider config path is empty")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("credential provider config: %w", err)
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("credential provider config: %w", err)
	}
	var files []string
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case ".json", ".yaml", ".yml":
			if !e.IsDir() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("credential provider config directory %s has no *.json, *.yaml or *.yml file", path)
	}
	slices.Sort(files)
	return files, nil
}

// decodeCredentialConfig reads one config file strictly: an unknown or
// duplicate field is an error naming it.
func decodeCredentialConfig(file string) (*kubeletconfigv1.CredentialProviderConfig, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("credential provider config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCredentialConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("credential provider config: %w", err)
	}
	if len(data) > maxCredentialConfigBytes {
		return nil, fmt.Errorf("credential provider config %s: larger than %d bytes", file, maxCredentialConfigBytes)
	}
	var cfg kubeletconfigv1.CredentialProviderConfig
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return nil, fmt.Errorf("credential provider config %s: %w", file, err)
	}
	if cfg.Kind != "CredentialProviderConfig" {
		return nil, fmt.Errorf("credential provider config %s: kind %q, want CredentialProviderConfig", file, cfg.Kind)
	}
	if !slices.Contains(credentialConfigVersions, cfg.APIVersion) {
		return nil, fmt.Errorf("credential provider config %s: apiVersion %q, want one of %s", file, cfg.APIVersion, strings.Join(credentialConfigVersions, ", "))
	}
	return &cfg, nil
}

// checkCredentialProvider validates p as the kubelet does and finds its
// executable, which must be a file directly in binDir. The error starts
// with the bad field (".name ...").
func checkCredentialProvider(p kubeletconfigv1.CredentialProvider, binDir string) (credentialProvider, error) {
	switch {
	case p.Name == "":
		return credentialProvider{}, errors.New(".name is empty: give the plugin executable's file name")
	case p.Name == "." || p.Name == ".." || strings.ContainsAny(p.Name, "/\\ \x00") || filepath.Base(p.Name) != p.Name:
		return credentialProvider{}, fmt.Errorf(".name %q: want a plain file name in the bin dir (no path separator, space, \".\" or \"..\")", sanitize.Line(p.Name, 64))
	case p.APIVersion == "":
		return credentialProvider{}, fmt.Errorf(".apiVersion is empty: want %s", credentialPluginVersions[0])
	case !slices.Contains(credentialPluginVersions, p.APIVersion):
		return credentialProvider{}, fmt.Errorf(".apiVersion %q: want one of %s", sanitize.Line(p.APIVersion, 64), strings.Join(credentialPluginVersions, ", "))
	case len(p.MatchImages) == 0:
		return credentialProvider{}, errors.New(".matchImages is empty: list at least one image pattern, e.g. *.dkr.ecr.*.amazonaws.com")
	case p.DefaultCacheDuration == nil:
		return credentialProvider{}, errors.New(".defaultCacheDuration is missing: give a duration such as 12h (0 caches only what the plugin's response asks for)")
	case p.DefaultCacheDuration.Duration < 0:
		return credentialProvider{}, fmt.Errorf(".defaultCacheDuration %v: want a duration >= 0", p.DefaultCacheDuration.Duration)
	case p.TokenAttributes != nil:
		return credentialProvider{}, errors.New(".tokenAttributes: service account tokens for credential providers are not supported by the webhook (it pulls no image for a pod); remove it and give the plugin credentials of its own")
	}
	for j, m := range p.MatchImages {
		if _, _, _, err := parseImagePattern(m); err != nil {
			return credentialProvider{}, fmt.Errorf(".matchImages[%d] %q: %w", j, sanitize.Line(m, 128), err)
		}
	}
	var env []string
	for j, e := range p.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
			return credentialProvider{}, fmt.Errorf(".env[%d].name %q: want a variable name without '='", j, sanitize.Line(e.Name, 64))
		}
		env = append(env, e.Name+"="+e.Value)
	}
	path, err := exec.LookPath(filepath.Join(binDir, p.Name))
	if err != nil {
		return credentialProvider{}, fmt.Errorf(".name %q: no executable %s: %w", p.Name, filepath.Join(binDir, p.Name), errors.Unwrap(err))
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return credentialProvider{}, fmt.Errorf(".name %q: %s is not a regular file", p.Name, path)
	}
	return credentialProvider{
		name:         p.Name,
		path:         path,
		apiVersion:   p.APIVersion,
		matchImages:  slices.Clone(p.MatchImages),
		defaultCache: p.DefaultCacheDuration.Duration,
		args:         slices.Clone(p.Args),
		env:          env,
	}, nil
}
