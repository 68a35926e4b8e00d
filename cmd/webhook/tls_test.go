package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testCA is a throw-away CA that issues server and client certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a PEM certificate and key for usage (server: 127.0.0.1).
func (ca *testCA) issue(t *testing.T, cn string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestWebhookServerClientCert starts the webhook server exactly as setup
// builds it (newWebhookServer) and POSTs to it with and without a client
// certificate.
func TestWebhookServerClientCert(t *testing.T) {
	serverCA, apiServerCA, otherCA := newTestCA(t, "serving"), newTestCA(t, "apiserver-clients"), newTestCA(t, "other")
	certDir := t.TempDir()
	crt, key := serverCA.issue(t, "isamatch-webhook", x509.ExtKeyUsageServerAuth)
	writeFile(t, filepath.Join(certDir, "tls.crt"), crt)
	writeFile(t, filepath.Join(certDir, "tls.key"), key)
	clientCAFile := filepath.Join(t.TempDir(), "client-ca.crt")
	writeFile(t, clientCAFile, apiServerCA.pem)

	pair := func(ca *testCA) []tls.Certificate {
		c, k := ca.issue(t, "kube-apiserver", x509.ExtKeyUsageClientAuth)
		p, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{p}
	}
	tests := []struct {
		name         string
		clientCAFile string
		clientCerts  []tls.Certificate
		wantRefused  bool
	}{
		{name: "no server.clientCAFile: no certificate needed", clientCAFile: ""},
		{name: "API server certificate accepted", clientCAFile: clientCAFile, clientCerts: pair(apiServerCA)},
		{name: "no client certificate refused", clientCAFile: clientCAFile, wantRefused: true},
		{name: "certificate of another CA refused", clientCAFile: clientCAFile, clientCerts: pair(otherCA), wantRefused: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			port := freePort(t)
			srv, _, err := newWebhookServer(options{port: port, certDir: certDir, clientCAFile: tc.clientCAFile}, nil)
			if err != nil {
				t.Fatal(err)
			}
			srv.Register("/ok", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- srv.Start(ctx) }()
			t.Cleanup(func() { cancel(); <-done }) //nolint:errcheck // the server's result once cancelled is not this test's

			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM(serverCA.pem)
			hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
				TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: tc.clientCerts},
			}}
			url := "https://127.0.0.1:" + strconv.Itoa(port) + "/ok"
			var resp *http.Response
			for range 100 { // until the server listens
				resp, err = hc.Post(url, "application/json", strings.NewReader("{}"))
				var op *net.OpError
				if err == nil || !errors.As(err, &op) || op.Op != "dial" {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if tc.wantRefused {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("POST without an accepted client certificate = %s, want a TLS error", resp.Status)
				}
				if !strings.Contains(err.Error(), "tls") {
					t.Errorf("POST error = %v, want a TLS handshake error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("POST: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("POST status = %d, want 200", resp.StatusCode)
			}
		})
	}
}

func TestRequireClientCertBadFile(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.crt")
	writeFile(t, notPEM, []byte("not a certificate"))
	tests := []struct {
		name, file, wantErr string
	}{
		{name: "missing", file: filepath.Join(t.TempDir(), "absent.crt"), wantErr: "no such file"},
		{name: "not PEM", file: notPEM, wantErr: "no PEM certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := requireClientCert(tc.file)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "server.clientCAFile") {
				t.Errorf("requireClientCert(%s) error = %v, want one naming server.clientCAFile and %q", tc.file, err, tc.wantErr)
			}
		})
	}
}
