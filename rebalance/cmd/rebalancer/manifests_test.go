package main

import (
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/isamatch/isamatch/internal/manifests"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/rebalance/pkg/isafit"
	"github.com/isamatch/isamatch/rebalance/pkg/weightedload"
)

// component is config/components/rebalance, relative to config.
const component = "components/rebalance"

// render renders the repository's config with the given components.
func render(t *testing.T, components ...string) []runtime.Object {
	t.Helper()
	objs, err := manifests.Render(t.Context(), t.TempDir(), filepath.Join("..", "..", "..", "config"), components...)
	if errors.Is(err, manifests.ErrNoKubectl) && os.Getenv("CI") == "" {
		t.Skip(err.Error() + " (required when CI is set)")
	}
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// one returns the one object of type T named name.
func one[T runtime.Object](t *testing.T, objs []runtime.Object, name string, getName func(T) string) T {
	t.Helper()
	found := manifests.Named(objs, name, getName)
	if len(found) != 1 {
		var zero T
		t.Fatalf("rendered config has %d %T named %q, want 1", len(found), zero, name)
	}
	return found[0]
}

const name = "isamatch-rebalancer"

// TestRebalanceComponentOffByDefault: config alone runs no rebalancer.
func TestRebalanceComponentOffByDefault(t *testing.T) {
	objs := render(t)
	if got := manifests.Named(objs, name, func(d *appsv1.Deployment) string { return d.Name }); len(got) != 0 {
		t.Errorf("config without components renders the Deployment %s; the rebalancer must be opt-in", name)
	}
}

// expandArgs is c's args as the kubelet passes them: $(NAME) replaced by
// the value of c's env var NAME, a literal one or the pod's namespace from
// the downward API.
func expandArgs(c corev1.Container, namespace string) []string {
	vars := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			vars[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			vars[e.Name] = namespace
		}
	}
	out := make([]string, len(c.Args))
	for k, a := range c.Args {
		for name, v := range vars {
			a = strings.ReplaceAll(a, "$("+name+")", v)
		}
		out[k] = a
	}
	return out
}

// TestRebalanceComponentRenders renders config with the rebalance
// component and checks that the Deployment's flags parse as descheduler's,
// that its policy loads through descheduler with ISAFit registered (so the
// plugin's own validation passes), and that the RBAC grants what
// descheduler calls and no more.
func TestRebalanceComponentRenders(t *testing.T) {
	objs := render(t, component)
	dep := one(t, objs, name, func(d *appsv1.Deployment) string { return d.Name })
	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("Deployment has %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]

	cmd, err := newCommand(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	flags := cmd.Flags()
	if err := flags.Parse(expandArgs(c, dep.Namespace)); err != nil {
		t.Fatalf("Deployment args %q do not parse as the rebalancer's: %v", c.Args, err)
	}
	str := func(f string) string {
		t.Helper()
		v, err := flags.GetString(f)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	interval, err := flags.GetDuration("descheduling-interval")
	if err != nil {
		t.Fatal(err)
	}
	leaderElect, err := flags.GetBool("leader-elect")
	if err != nil {
		t.Fatal(err)
	}
	onJoin, err := flags.GetBool("trigger-on-node-join")
	if err != nil {
		t.Fatal(err)
	}
	minInterval, err := flags.GetDuration("trigger-min-interval")
	if err != nil {
		t.Fatal(err)
	}
	securePort, err := flags.GetInt("secure-port")
	if err != nil {
		t.Fatal(err)
	}
	policyFile := str("policy-config-file")
	leaseNS, leaseName := str("leader-elect-resource-namespace"), str("leader-elect-resource-name")

	// The policy file is a key of a mounted ConfigMap.
	var cm *corev1.ConfigMap
	for _, v := range pod.Volumes {
		for _, m := range c.VolumeMounts {
			if v.ConfigMap != nil && m.Name == v.Name && m.MountPath == path.Dir(policyFile) {
				cm = one(t, objs, v.ConfigMap.Name, func(c *corev1.ConfigMap) string { return c.Name })
			}
		}
	}
	if cm == nil {
		t.Fatalf("no ConfigMap volume is mounted at %s, the directory of --policy-config-file", path.Dir(policyFile))
	}
	policyText, ok := cm.Data[path.Base(policyFile)]
	if !ok {
		t.Fatalf("ConfigMap %s has no key %s", cm.Name, path.Base(policyFile))
	}

	sa := one(t, objs, pod.ServiceAccountName, func(s *corev1.ServiceAccount) string { return s.Name })
	cr := one(t, objs, name, func(r *rbacv1.ClusterRole) string { return r.Name })
	crb := one(t, objs, name, func(b *rbacv1.ClusterRoleBinding) string { return b.Name })
	role := one(t, objs, name, func(r *rbacv1.Role) string { return r.Name })
	rb := one(t, objs, name, func(b *rbacv1.RoleBinding) string { return b.Name })
	boundToSA := func(ref rbacv1.RoleRef, subjects []rbacv1.Subject, kind, roleName string) bool {
		return ref.Kind == kind && ref.Name == roleName && slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Name == sa.Name && s.Namespace == sa.Namespace
		})
	}
	psc, sc := pod.SecurityContext, c.SecurityContext
	livenessPort := int32(0)
	if c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil {
		for _, p := range c.Ports {
			if p.Name == c.LivenessProbe.HTTPGet.Port.String() || p.ContainerPort == c.LivenessProbe.HTTPGet.Port.IntVal {
				livenessPort = p.ContainerPort
			}
		}
	}
	for _, ck := range []struct {
		name string
		ok   bool
	}{
		{"in isamatch-system", dep.Namespace == "isamatch-system" && sa.Namespace == dep.Namespace && cm.Namespace == dep.Namespace},
		{"image placeholder", c.Image == "ghcr.io/isamatch/rebalancer:latest"},
		{"runs cycles on a timer", interval > 0},
		{"leader-elected", leaderElect},
		{"a node joining starts a cycle, at most one per 10s or more", onJoin && minInterval >= 10*time.Second && minInterval < interval},
		{"Lease in its own namespace", leaseNS == dep.Namespace},
		{"Role may create the Lease", manifests.Allows(role.Rules, "coordination.k8s.io", "leases", "create")},
		{"Role reads and renews only the Lease " + leaseName, manifests.OnlyNamed(role.Rules, "coordination.k8s.io", "leases", "get", leaseName) &&
			manifests.OnlyNamed(role.Rules, "coordination.k8s.io", "leases", "update", leaseName)},
		{"Role in the Lease's namespace, bound to the ServiceAccount", role.Namespace == leaseNS && rb.Namespace == leaseNS && boundToSA(rb.RoleRef, rb.Subjects, "Role", role.Name)},
		{"ClusterRole bound to the ServiceAccount", boundToSA(crb.RoleRef, crb.Subjects, "ClusterRole", cr.Name)},
		{"reads pods, nodes and namespaces", manifests.Allows(cr.Rules, "", "pods", "get", "list", "watch") &&
			manifests.Allows(cr.Rules, "", "nodes", "get", "list", "watch") && manifests.Allows(cr.Rules, "", "namespaces", "get", "list", "watch")},
		{"evicts through the Eviction API", manifests.Allows(cr.Rules, "", "pods/eviction", "create")},
		{"reads node and pod metrics (WeightedLoad usage: metrics)", manifests.Allows(cr.Rules, "metrics.k8s.io", "nodes", "get", "list") && manifests.Allows(cr.Rules, "metrics.k8s.io", "pods", "get", "list")},
		{"never deletes, updates or patches pods", !manifests.Allows(cr.Rules, "", "pods", "delete") && !manifests.Allows(cr.Rules, "", "pods", "update") && !manifests.Allows(cr.Rules, "", "pods", "patch")},
		{"reads PodDisruptionBudgets and PriorityClasses", manifests.Allows(cr.Rules, "policy", "poddisruptionbudgets", "list", "watch") &&
			manifests.Allows(cr.Rules, "scheduling.k8s.io", "priorityclasses", "list", "watch")},
		{"reads no secrets", !manifests.Allows(cr.Rules, "", "secrets", "get") && !manifests.Allows(role.Rules, "", "secrets", "get")},
		{"the webhook leaves it alone", dep.Spec.Template.Labels[isa.IgnoreLabel] == "true"},
		{"non-root", psc != nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot},
		{"RuntimeDefault seccomp", psc != nil && psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault},
		{"read-only root fs", sc != nil && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem},
		{"no privilege escalation", sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation},
		{"drop ALL", sc != nil && sc.Capabilities != nil && slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"})},
		{"resources", c.Resources.Requests.Cpu().MilliValue() > 0 && !c.Resources.Requests.Memory().IsZero() && !c.Resources.Limits.Memory().IsZero()},
		{"liveness probes --secure-port", livenessPort != 0 && int(livenessPort) == securePort},
	} {
		if !ck.ok {
			t.Errorf("config with %s: %s: not so", component, ck.name)
		}
	}

	// The policy as the binary loads it: descheduler's registry plus ISAFit
	// (main does the same in PreRunE).
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(policyText), 0o600); err != nil {
		t.Fatal(err)
	}
	descheduler.SetupPlugins()
	isafit.Register(pluginregistry.PluginRegistry, nil)
	weightedload.Register(pluginregistry.PluginRegistry, weightedload.Deps{})
	policy, err := descheduler.LoadPolicyConfig(file, fake.NewClientset(), pluginregistry.PluginRegistry)
	if err != nil {
		t.Fatalf("policy in ConfigMap %s does not load: %v", cm.Name, err)
	}
	type enabled struct{ Profile, Balance, Deschedule []string }
	var got []enabled
	var args *isafit.ISAFitArgs
	var loadArgs *weightedload.WeightedLoadArgs
	for _, p := range policy.Profiles {
		got = append(got, enabled{[]string{p.Name}, p.Plugins.Balance.Enabled, p.Plugins.Deschedule.Enabled})
		for _, pc := range p.PluginConfigs {
			switch a := pc.Args.(type) {
			case *isafit.ISAFitArgs:
				args = a
			case *weightedload.WeightedLoadArgs:
				loadArgs = a
			}
		}
	}
	want := []enabled{{[]string{"isa-fit"}, []string{isafit.PluginName}, nil}, {[]string{"load"}, []string{weightedload.PluginName}, nil}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("enabled plugins (-want +got):\n%s", diff)
	}
	if args == nil {
		t.Fatal("policy has no ISAFit args")
	}
	if args.MinPodAge.Duration <= 0 || args.MaxEvictionsPerCycle <= 0 || args.MaxEvictionsPerNode <= 0 || args.DisruptionWait.Duration >= interval {
		t.Errorf("ISAFit args %+v: want a cool-down, per-cycle and per-node limits, and a disruption wait shorter than the interval %s", args, interval)
	}
	if loadArgs == nil {
		t.Fatal("policy has no WeightedLoad args")
	}
	if loadArgs.Usage != weightedload.UsageMetrics || loadArgs.Hysteresis <= 0 {
		t.Errorf("WeightedLoad usage %q, hysteresis %d: want measured use (%q, falling back to requests) and a hysteresis margin", loadArgs.Usage, loadArgs.Hysteresis, weightedload.UsageMetrics)
	}
	for _, ns := range []string{"kube-system", "isamatch-system", "isamatch-labeler"} {
		if args.Namespaces == nil || !slices.Contains(args.Namespaces.Exclude, ns) {
			t.Errorf("ISAFit namespaces %+v: want %s excluded", args.Namespaces, ns)
		}
		if loadArgs.Namespaces == nil || !slices.Contains(loadArgs.Namespaces.Exclude, ns) {
			t.Errorf("WeightedLoad namespaces %+v: want %s excluded", loadArgs.Namespaces, ns)
		}
	}
}
