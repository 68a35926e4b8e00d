package testbed

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/crypto/bcrypt"
)

// RegistryPackage is the Debian package that ships the registry binary.
const RegistryPackage = "docker-registry"

// ErrRegistryBinaryMissing means Debian's docker-registry is not installed.
var ErrRegistryBinaryMissing = errors.New("docker-registry binary not found: apt-get install " + RegistryPackage)

// RegistryOptions configures StartRegistry.
type RegistryOptions struct {
	// Binary is the registry executable. Empty means $ISAMATCH_REGISTRY_BIN,
	// then docker-registry on PATH, then /usr/bin/docker-registry.
	Binary string
	// Dir holds the configuration, certificates, htpasswd, storage and log.
	// Empty means a new temporary directory, removed by Stop unless
	// ISAMATCH_KEEP_TMP=true.
	Dir string
	// Username and Password are the one basic-auth account. Empty means
	// "isamatch" and a random password.
	Username, Password string
}

// Registry is a running docker-registry (Docker distribution) on loopback,
// serving TLS with a certificate from a CA of its own and requiring basic
// auth.
type Registry struct {
	// Host is "127.0.0.1:<port>", the registry part of image references.
	Host string
	// CAFile is the PEM file of the CA that signed the serving certificate.
	CAFile string
	// CAPEM is the same CA in memory.
	CAPEM []byte
	// Username and Password are the basic-auth credentials.
	Username, Password string
	// Dir holds configuration, storage and log.
	Dir string
	// Process is the registry process.
	Process *Process

	removeDir bool
}

// findRegistryBinary resolves RegistryOptions.Binary.
func findRegistryBinary(bin string) (string, error) {
	if bin == "" {
		bin = os.Getenv("ISAMATCH_REGISTRY_BIN")
	}
	if bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("registry binary %s: %w", bin, ErrRegistryBinaryMissing)
		}
		return bin, nil
	}
	if p, err := exec.LookPath(RegistryPackage); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/docker-registry"); err == nil {
		return "/usr/bin/docker-registry", nil
	}
	return "", ErrRegistryBinaryMissing
}

// StartRegistry runs docker-registry on a free loopback port with a fresh
// CA, TLS certificate and htpasswd file, and waits until it answers /v2/.
// ctx bounds the start-up only. The error wraps ErrRegistryBinaryMissing
// when the binary is not installed.
func StartRegistry(ctx context.Context, opts RegistryOptions) (r *Registry, err error) {
	bin, err := findRegistryBinary(opts.Binary)
	if err != nil {
		return nil, err
	}
	r = &Registry{Dir: opts.Dir, Username: opts.Username, Password: opts.Password}
	if r.Username == "" {
		r.Username = "isamatch"
	}
	if r.Password == "" {
		r.Password = randomHex(12)
	}
	if r.Dir == "" {
		if r.Dir, err = os.MkdirTemp("", "isamatch-registry-"); err != nil {
			return nil, fmt.Errorf("create registry dir: %w", err)
		}
		r.removeDir = true
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.Stop())
			r = nil
		}
	}()

	caPEM, certPEM, keyPEM, err := newServingCert([]string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback})
	if err != nil {
		return r, err
	}
	r.CAPEM = caPEM
	r.CAFile = filepath.Join(r.Dir, "ca.crt")
	htpasswd, err := HTPasswd(r.Username, r.Password)
	if err != nil {
		return r, err
	}
	err = StartOnFreePorts(1, func(ports []int) error {
		r.Host = "127.0.0.1:" + strconv.Itoa(ports[0])
		files := map[string][]byte{
			"ca.crt":     caPEM,
			"tls.crt":    certPEM,
			"tls.key":    keyPEM,
			"htpasswd":   htpasswd,
			"config.yml": []byte(registryConfig(r.Dir, r.Host)),
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(r.Dir, name), data, 0o600); err != nil {
				return fmt.Errorf("write registry %s: %w", name, err)
			}
		}
		p, err := StartProcess("docker-registry", bin, []string{"serve", filepath.Join(r.Dir, "config.yml")}, nil,
			filepath.Join(r.Dir, "registry.log"))
		if err != nil {
			return err
		}
		// Without credentials /v2/ answers 401: the server is up and auth is on.
		err = p.WaitHTTP(ctx, "https://"+r.Host+"/v2/", r.TLSConfig(), 30*time.Second,
			func(status int) bool { return status == http.StatusUnauthorized })
		if err != nil {
			_ = p.Stop(10 * time.Second) // err carries its log tail
			return err
		}
		r.Process = p
		return nil
	})
	return r, err
}

// registryConfig is the distribution configuration: filesystem storage under
// dir, TLS, htpasswd auth, loopback only.
func registryConfig(dir, host string) string {
	return fmt.Sprintf(`version: 0.1
log:
  level: info
  formatter: text
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %[1]s/data
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: %[2]s
  secret: %[3]s
  tls:
    certificate: %[1]s/tls.crt
    key: %[1]s/tls.key
auth:
  htpasswd:
    realm: isamatch-test
    path: %[1]s/htpasswd
health:
  storagedriver:
    enabled: false
`, dir, host, randomHex(16))
}

// Stop stops the registry and removes the directory StartRegistry created.
func (r *Registry) Stop() error {
	if r == nil {
		return nil
	}
	var errs []error
	if r.Process != nil {
		errs = append(errs, r.Process.Stop(10*time.Second))
	}
	if r.removeDir && !keepTmp() {
		errs = append(errs, os.RemoveAll(r.Dir))
	}
	return errors.Join(errs...)
}

// Ref returns "<host>/<repo>:<tag>".
func (r *Registry) Ref(repo, tag string) string { return r.Host + "/" + repo + ":" + tag }

// TLSConfig trusts the registry's CA only.
func (r *Registry) TLSConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(r.CAPEM)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// Transport is an HTTP transport that trusts the registry's CA.
func (r *Registry) Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = r.TLSConfig()
	return t
}

// Auth returns the basic-auth credentials as a go-containerregistry authenticator.
func (r *Registry) Auth() authn.Authenticator {
	return &authn.Basic{Username: r.Username, Password: r.Password}
}

// RemoteOptions are go-containerregistry options that reach the registry
// with its CA and credentials, bounded by ctx.
func (r *Registry) RemoteOptions(ctx context.Context) []remote.Option {
	return []remote.Option{remote.WithContext(ctx), remote.WithAuth(r.Auth()), remote.WithTransport(r.Transport())}
}

// DockerConfigJSON is the content of a kubernetes.io/dockerconfigjson pull
// secret holding the registry's credentials.
func (r *Registry) DockerConfigJSON() []byte {
	auth := base64.StdEncoding.EncodeToString([]byte(r.Username + ":" + r.Password))
	data, _ := json.Marshal(map[string]any{"auths": map[string]any{
		r.Host: map[string]string{"username": r.Username, "password": r.Password, "auth": auth},
	}})
	return data
}

// HTPasswd returns an htpasswd line for user with a bcrypt hash of password,
// the only scheme docker-registry accepts.
func HTPasswd(user, password string) ([]byte, error) {
	// MinCost: docker-registry checks the password on every request, and at
	// the default cost one check takes ~150 ms on a busy 2-core machine
	// (~2 ms at MinCost). These are throwaway test credentials.
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		return nil, fmt.Errorf("hash registry password: %w", err)
	}
	return []byte(user + ":" + string(hash) + "\n"), nil
}

// newServingCert creates a CA and a serving certificate it signs for the
// given names, valid for a day, all PEM encoded.
func newServingCert(dnsNames []string, ips []net.IP) (caPEM, certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "isamatch test registry CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("sign CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("generate serving key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: "isamatch test registry"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     dnsNames,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("sign serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("marshal serving key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return n
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return hex.EncodeToString(b)
}
