package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// secretCerts serves the certificate the rotator keeps in its Secret, read
// through the API as soon as the rotator writes it. The kubelet projects a
// changed Secret into the pod's volume only at its next sync (a minute or
// more), and cert-controller looks for the files with a doubling back-off:
// a fresh install, whose Secret starts empty, stayed unready for one to
// three minutes, and every pod created meanwhile was admitted without a
// decision (failurePolicy Ignore). The webhook server takes its
// certificate from GetCertificate instead of the files.
type secretCerts struct {
	key  types.NamespacedName
	cert atomic.Pointer[tls.Certificate]
	// ca is the Secret's ca.crt: what the MutatingWebhookConfiguration's
	// caBundle must hold before the API server can call this server.
	ca atomic.Pointer[[]byte]
}

// Keys of the rotator's Secret (cert-controller's defaults).
const (
	secretCertKey = "tls.crt"
	secretKeyKey  = "tls.key"
	secretCAKey   = "ca.crt"
)

// GetCertificate is tls.Config.GetCertificate.
func (s *secretCerts) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c := s.cert.Load()
	if c == nil {
		return nil, errors.New("no serving certificate in Secret " + s.key.String() + " yet")
	}
	return c, nil
}

// set loads secret's certificate. A Secret the rotator has not filled yet
// is no error: there is nothing to serve yet.
func (s *secretCerts) set(secret *corev1.Secret) error {
	crt, key := secret.Data[secretCertKey], secret.Data[secretKeyKey]
	if len(crt) == 0 || len(key) == 0 {
		return nil
	}
	c, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return fmt.Errorf("secret %s: %s and %s: %w", s.key, secretCertKey, secretKeyKey, err)
	}
	ca := bytes.Clone(secret.Data[secretCAKey])
	s.ca.Store(&ca)
	s.cert.Store(&c)
	return nil
}

// watch keeps the certificate equal to the Secret's until ctx ends.
func (s *secretCerts) watch(ctx context.Context, cs kubernetes.Interface) error {
	log := logr.FromContextOrDiscard(ctx).WithValues("secret", s.key.String())
	byName := fields.OneTermEqualSelector("metadata.name", s.key.Name).String()
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = byName
			return cs.CoreV1().Secrets(s.key.Namespace).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = byName
			return cs.CoreV1().Secrets(s.key.Namespace).Watch(ctx, o)
		},
	}
	load := func(obj any) {
		if secret, ok := obj.(*corev1.Secret); ok {
			if err := s.set(secret); err != nil {
				log.Error(err, "serving certificate not loaded")
			}
		}
	}
	// As generated informers do: a client without watch-list support
	// (client-go's fake) lists and then watches.
	inf := toolscache.NewSharedIndexInformer(toolscache.ToListWatcherWithWatchListSemantics(lw, cs), &corev1.Secret{}, 0, toolscache.Indexers{})
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    load,
		UpdateFunc: func(_, obj any) { load(obj) },
	}); err != nil {
		return fmt.Errorf("watch secret %s: %w", s.key, err)
	}
	inf.RunWithContext(ctx)
	return nil
}

// waitReady closes ready once a certificate is loaded and the
// MutatingWebhookConfiguration name trusts its CA in every webhook, as the
// rotator's own readiness did with the files; it polls every
// certsReadyPoll until ctx ends.
func (s *secretCerts) waitReady(ctx context.Context, r client.Reader, name string, ready chan<- struct{}) {
	err := wait.PollUntilContextCancel(ctx, certsReadyPoll, true, func(ctx context.Context) (bool, error) {
		ca := s.ca.Load()
		if s.cert.Load() == nil || ca == nil || len(*ca) == 0 {
			return false, nil
		}
		mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := r.Get(ctx, types.NamespacedName{Name: name}, mwc); err != nil {
			return false, nil //nolint:nilerr // not there yet or not readable: ask again
		}
		for _, w := range mwc.Webhooks {
			if !bytes.Contains(w.ClientConfig.CABundle, bytes.TrimSpace(*ca)) {
				return false, nil
			}
		}
		return len(mwc.Webhooks) > 0, nil
	})
	if err == nil {
		close(ready)
	}
}

// certsReadyPoll is how often waitReady looks.
const certsReadyPoll = 500 * time.Millisecond

// addCertRotator adds the certificate rotator with server.certRotation, and
// certs' watch of the Secret it writes on every replica. The channel it
// returns is closed once certs hold a serving certificate whose CA the
// MutatingWebhookConfiguration trusts (at once without rotation: the
// certificate is provided in server.certDir).
func addCertRotator(mgr manager.Manager, cfg *rest.Config, o options, certs *secretCerts) (<-chan struct{}, error) {
	certsReady := make(chan struct{})
	if !o.certRotation {
		close(certsReady)
		return certsReady, nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create clientset: %w", err)
	}
	if err := mgr.Add(everyReplica(func(ctx context.Context) error { return certs.watch(ctx, cs) })); err != nil {
		return nil, fmt.Errorf("add certificate watch: %w", err)
	}
	err = mgr.Add(everyReplica(func(ctx context.Context) error {
		certs.waitReady(ctx, mgr.GetAPIReader(), WebhookConfigName, certsReady)
		return nil
	}))
	if err != nil {
		return nil, fmt.Errorf("add certificate readiness: %w", err)
	}
	err = rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: o.namespace, Name: CertSecretName},
		CertDir:        o.certDir,
		CAName:         "isamatch-ca",
		CAOrganization: "isamatch",
		DNSName:        ServiceName + "." + o.namespace + ".svc",
		ExtraDNSNames:  []string{ServiceName + "." + o.namespace + ".svc.cluster.local", ServiceName + "." + o.namespace},
		// Its own readiness waits for the kubelet to project the Secret
		// into CertDir; certs serve it before that.
		IsReady:  make(chan struct{}),
		Webhooks: []rotator.WebhookInfo{{Name: WebhookConfigName, Type: rotator.Mutating}},
		// Every replica keeps the certificate: no leader needed.
		RequireLeaderElection: false,
	})
	if err != nil {
		return nil, fmt.Errorf("set up certificate rotation: %w", err)
	}
	return certsReady, nil
}
