package registry

import (
	"encoding/base64"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func dockerConfigSecret(namespace, name, host, user, password string) *corev1.Secret {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: fmt.Appendf(nil,
			`{"auths":{%q:{"username":%q,"password":%q,"auth":%q}}}`, host, user, password, auth)},
	}
}

func TestKubernetesKeychain(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "private/app:1", image(t, "linux", "riscv64", "rva23u64", nil))
	basicAuth(tr, "bob", "hunter2")
	client := fake.NewClientset(
		dockerConfigSecret("pods", "good", tr.host, "bob", "hunter2"),
		dockerConfigSecret("pods", "wrong", tr.host, "bob", "guess"),
		dockerConfigSecret("sa", "sa-secret", tr.host, "bob", "hunter2"),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "sa", Name: "builder"},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "sa-secret"}}},
	)
	tests := []struct {
		name string
		auth PullAuth
		kind string // "" means success
	}{
		{name: "pod pull secret", auth: PullAuth{Namespace: "pods", ImagePullSecrets: []string{"good"}}},
		{name: "service account pull secret", auth: PullAuth{Namespace: "sa", ServiceAccountName: "builder"}},
		{name: "wrong password", auth: PullAuth{Namespace: "pods", ImagePullSecrets: []string{"wrong"}}, kind: KindUnauthorized},
		{name: "missing secret falls back to anonymous", auth: PullAuth{Namespace: "pods", ImagePullSecrets: []string{"absent"}}, kind: KindUnauthorized},
		{name: "no secret at all", auth: PullAuth{Namespace: "sa"}, kind: KindUnauthorized},
	}
	r := newResolver(t, Options{InsecureRegistries: []string{tr.host}, Keychains: KubernetesKeychain(client)})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Resolve(t.Context(), tr.ref("private/app:1"), tc.auth)
			if tc.kind == "" {
				if err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				if diff := cmp.Diff([]Platform{{OS: "linux", Architecture: "riscv64", Variant: "rva23u64"}}, got, ignoreDigest); diff != "" {
					t.Errorf("Resolve (-want +got):\n%s", diff)
				}
				return
			}
			var re *Error
			if !errors.As(err, &re) || re.Kind != tc.kind {
				t.Errorf("Resolve error = %v, want kind %s", err, tc.kind)
			}
		})
	}
}
