package node

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// tearDown removes what `kubectl apply -k overlay` installed so that the
// next container starts on a cluster without isamatch, and waits until
// namespaces are gone.
//
// It is housekeeping between containers, not an uninstall as a user runs
// one (the uninstall specs run those, with every default): the pods left in
// namespaces are deleted at once instead of after their lame duck (15 s)
// and termination grace. The namespace controller, which looks again half
// a pod's grace period later (16 s for the default 30 s) while a pod is
// left, then finds none at its first look.
func tearDown(ctx context.Context, overlay string, namespaces ...string) {
	GinkgoHelper()
	GinkgoWriter.Print(kubectlRun(ctx, "delete", "-k", overlay, "--ignore-not-found", "--wait=false"))
	Eventually(func(g Gomega) {
		for _, ns := range namespaces {
			var pods corev1.PodList
			g.Expect(cl.Client.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
			for i := range pods.Items {
				g.Expect(client.IgnoreNotFound(cl.Client.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(0)))).To(Succeed())
			}
			err := cl.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace %s is gone", ns)
		}
	}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
}
