package credprov

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"

	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Bounds of one credential provider plugin run.
const (
	// maxPluginStdout bounds the response a plugin prints.
	maxPluginStdout = 1 << 20
	// maxPluginStderr is what is kept of a plugin's stderr, for the log.
	maxPluginStderr = 1 << 10
	// pluginWaitDelay bounds the wait for the plugin's output pipes once it
	// has exited or been killed (a child it left behind may hold them).
	pluginWaitDelay = time.Second
)

// errPluginOutput marks a plugin that printed more than maxPluginStdout.
var errPluginOutput = errors.New("credential provider printed too much")

// pluginResponse is a checked CredentialProviderResponse.
type pluginResponse struct {
	cacheKeyType credentialproviderv1.PluginCacheKeyType
	cacheFor     *time.Duration // nil: the provider's defaultCacheDuration
	auth         []authEntry
}

// authEntry is one credential of a response, under its normalised key.
type authEntry struct {
	key      string
	username string
	password string
}

// runPlugin runs p's executable for image, per the kubelet's exec protocol:
// a CredentialProviderRequest on stdin, a CredentialProviderResponse of the
// same apiVersion on stdout. stderr is returned for the log only: errors
// never carry what the plugin printed.
func runPlugin(ctx context.Context, p *credentialProvider, image string, timeout time.Duration) (*pluginResponse, []byte, error) {
	req, err := json.Marshal(credentialproviderv1.CredentialProviderRequest{Image: image})
	if err != nil {
		return nil, nil, fmt.Errorf("credential provider %s: encode request: %w", p.name, err)
	}
	// The request's TypeMeta is the provider's version, not v1's.
	req, err = withTypeMeta(req, p.apiVersion, "CredentialProviderRequest")
	if err != nil {
		return nil, nil, fmt.Errorf("credential provider %s: encode request: %w", p.name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.path, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdin = bytes.NewReader(req)
	stdout := &cappedBuffer{max: maxPluginStdout, overflow: cancel}
	stderr := &cappedBuffer{max: maxPluginStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = pluginWaitDelay
	killProcessGroup(cmd)
	err = cmd.Run()
	// Whatever the plugin left running dies with it, however it ended.
	killGroupAfterExit(cmd)
	switch {
	case stdout.overflowed():
		return nil, stderr.bytes(), fmt.Errorf("credential provider %s: %w: more than %d bytes on stdout", p.name, errPluginOutput, maxPluginStdout)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, stderr.bytes(), fmt.Errorf("credential provider %s: no answer within %v: %w", p.name, timeout, context.DeadlineExceeded)
	case ctx.Err() != nil:
		return nil, stderr.bytes(), fmt.Errorf("credential provider %s: %w", p.name, ctx.Err())
	case err != nil:
		return nil, stderr.bytes(), fmt.Errorf("credential provider %s failed: %v", p.name, err) //nolint:errorlint // the plugin's failure, not a registry's: kept out of the resolver's classification
	}
	resp, err := decodePluginResponse(stdout.bytes(), p.apiVersion)
	if err != nil {
		return nil, stderr.bytes(), fmt.Errorf("credential provider %s: %v", p.name, err) //nolint:errorlint // a plugin's garbage is not a malformed image: kept out of the resolver's classification
	}
	return resp, stderr.bytes(), nil
}

// withTypeMeta sets apiVersion and kind on the JSON object data.
func withTypeMeta(data []byte, apiVersion, kind string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = apiVersion, kind
	return json.Marshal(m)
}

// decodePluginResponse checks a plugin's stdout strictly: the apiVersion it
// was asked with, kind CredentialProviderResponse, no unknown field, a
// known cacheKeyType, a cacheDuration >= 0. Its errors name the field, never
// its value (which may be a credential).
func decodePluginResponse(data []byte, apiVersion string) (*pluginResponse, error) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(data, &tm); err != nil {
		return nil, fmt.Errorf("stdout is not a JSON CredentialProviderResponse (%d bytes)", len(data))
	}
	if tm.APIVersion != apiVersion {
		return nil, fmt.Errorf("response apiVersion %q, want %q as in the config", sanitize.Line(tm.APIVersion, 64), apiVersion)
	}
	if tm.Kind != "CredentialProviderResponse" {
		return nil, fmt.Errorf("response kind %q, want CredentialProviderResponse", sanitize.Line(tm.Kind, 64))
	}
	var r credentialproviderv1.CredentialProviderResponse
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decode response: %s", jsonFieldError(err))
	}
	if dec.More() {
		return nil, errors.New("response: data after the JSON object")
	}
	switch r.CacheKeyType {
	case credentialproviderv1.ImagePluginCacheKeyType, credentialproviderv1.RegistryPluginCacheKeyType, credentialproviderv1.GlobalPluginCacheKeyType:
	default:
		return nil, fmt.Errorf("response cacheKeyType %q, want Image, Registry or Global", sanitize.Line(string(r.CacheKeyType), 32))
	}
	out := &pluginResponse{cacheKeyType: r.CacheKeyType}
	if r.CacheDuration != nil {
		if r.CacheDuration.Duration < 0 {
			return nil, fmt.Errorf("response cacheDuration %v: want >= 0", r.CacheDuration.Duration)
		}
		d := r.CacheDuration.Duration
		out.cacheFor = &d
	}
	for k, a := range r.Auth {
		if _, _, _, err := parseImagePattern(k); err != nil {
			return nil, fmt.Errorf("response auth key %q is not an image pattern", sanitize.Line(k, 128))
		}
		out.auth = append(out.auth, authEntry{key: authKey(k), username: a.Username, password: a.Password})
	}
	return out, nil
}

// jsonFieldError describes a decoding error by its field and position,
// without the offending value.
func jsonFieldError(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("invalid JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %q: want %s", typ.Field, typ.Type)
	}
	// Unknown fields: `json: unknown field "name"`, with the field's name.
	return sanitize.Line(err.Error(), 128)
}

// cappedBuffer keeps at most max bytes; past them it calls overflow (if
// set) and fails the write, so an endless plugin is killed, not drained.
type cappedBuffer struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	max      int
	over     bool
	overflow func()
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); len(p) > room {
		b.buf.Write(p[:max(room, 0)])
		if b.overflow == nil {
			return len(p), nil // stderr: drop the rest quietly
		}
		b.over = true
		b.overflow()
		return 0, errPluginOutput
	}
	return b.buf.Write(p)
}

func (b *cappedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

func (b *cappedBuffer) overflowed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.over
}
