package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestSecretCerts: the webhook server serves the certificate the rotator
// writes into the Secret as soon as it is written, with no file in
// --cert-dir; readiness waits until the webhook configuration trusts its
// CA.
func TestSecretCerts(t *testing.T) {
	key := types.NamespacedName{Namespace: "isamatch-system", Name: CertSecretName}
	empty := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	cs := fake.NewClientset(empty)
	certs := &secretCerts{key: key}
	ctx := t.Context()
	go func() { _ = certs.watch(ctx, cs) }()

	port := freePort(t)
	// No files: the server would fail to start reading them.
	srv, _, err := newWebhookServer(options{port: port, certDir: filepath.Join(t.TempDir(), "none")}, certs)
	if err != nil {
		t.Fatal(err)
	}
	srv.Register("/ok", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()

	ca := newTestCA(t, "isamatch-ca")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.pem)
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/ok"
	if _, err := certs.GetCertificate(nil); err == nil {
		t.Fatal("a certificate before the rotator wrote the Secret")
	}

	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: WebhookConfigName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "pods.isa.isamatch.io"}}}
	reader := crfake.NewClientBuilder().WithObjects(mwc).Build()
	ready := make(chan struct{})
	go certs.waitReady(ctx, reader, WebhookConfigName, ready)

	crt, k := ca.issue(t, "isamatch-webhook", x509.ExtKeyUsageServerAuth)
	filled := empty.DeepCopy()
	filled.Data = map[string][]byte{secretCertKey: crt, secretKeyKey: k, secretCAKey: ca.pem}
	if _, err := cs.CoreV1().Secrets(key.Namespace).Update(ctx, filled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		resp, err := hc.Post(url, "application/json", nil)
		if err != nil {
			last = err
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("the server never served the Secret's certificate: %v (last: %v)", err, last)
	}

	select {
	case <-ready:
		t.Fatal("ready before the webhook configuration trusts the CA")
	case <-time.After(3 * certsReadyPoll):
	}
	mwc.Webhooks[0].ClientConfig.CABundle = ca.pem
	if err := reader.Update(ctx, mwc); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("not ready once the webhook configuration trusts the CA")
	}
}
