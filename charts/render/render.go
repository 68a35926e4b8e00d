package render

import (
	"context"
	"fmt"
	"io"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	kubefake "helm.sh/helm/v4/pkg/kube/fake"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
)

// Chart renders ch with vals for a cluster of kubeVersion, as release
// "isamatch" in namespace "default", without a cluster: the values are
// checked against the chart's schema, and the result holds the manifest
// (hooks apart) and the hooks.
func Chart(ctx context.Context, ch *chart.Chart, vals map[string]any, kubeVersion common.KubeVersion) (*release.Release, error) {
	cfg := action.NewConfiguration()
	cfg.Releases = storage.Init(driver.NewMemory())
	cfg.KubeClient = &kubefake.PrintingKubeClient{Out: io.Discard}
	inst := action.NewInstall(cfg)
	inst.DryRunStrategy = action.DryRunClient
	inst.ReleaseName = "isamatch"
	inst.Namespace = "default"
	inst.KubeVersion = &kubeVersion
	r, err := inst.RunWithContext(ctx, ch, vals)
	if err != nil {
		return nil, err
	}
	rel, ok := r.(*release.Release)
	if !ok {
		return nil, fmt.Errorf("install returned a %T, want a *release.Release", r)
	}
	return rel, nil
}
