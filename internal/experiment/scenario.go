package experiment

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Image is one test image an experiment needs in the registry.
type Image struct {
	// Repo and Tag are relative to the registry host.
	Repo, Tag string
	// Platforms are the image's platforms: os/architecture/variant plus the
	// config labels of that platform's image.
	Platforms []Platform
}

// Platform is one entry of an image index.
type Platform struct {
	OS, Architecture, Variant string
	Labels                    map[string]string
}

// ExtensionNeeds are the extension tasks' needs in the paper's experiments.
var ExtensionNeeds = []string{"RV64IMFD", "RV64IMFV", "RV64IMFDV"}

// Scenario is one of the paper's experiments.
type Scenario struct {
	// Name is short and DNS-safe (it names namespaces).
	Name string
	// Title is what the result table prints.
	Title string
	// PaperStock is the stock scheduler's correctness the paper reports, or
	// a negative number when the paper gives none.
	PaperStock float64
	// Needs are drawn for the tasks.
	Needs []string
	// Emulation marks the paper's QEMU flow: the tasks cross-compile for
	// their need, so a node that emulates it is the best fit.
	Emulation bool
	// Pod builds the task's pod; isamatch says whether the run has the
	// webhook (the pod then carries what isamatch users write).
	Pod func(t Task, isamatch bool, registry string) *corev1.Pod
}

// Images lists every image the scenarios use.
func Images() []Image {
	rv := func(labels map[string]string) []Platform {
		return []Platform{{OS: "linux", Architecture: "riscv64", Labels: labels}}
	}
	imgs := []Image{
		{Repo: "paper/base", Tag: "v1", Platforms: rv(nil)},
		{Repo: "paper/cross", Tag: "v1", Platforms: []Platform{
			{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "riscv64"}}},
	}
	for _, n := range ExtensionNeeds {
		imgs = append(imgs, Image{Repo: "paper/ext", Tag: strings.ToLower(n),
			Platforms: rv(map[string]string{isa.BareImageRequestLabel: strings.ToLower(n)})})
	}
	return imgs
}

// Scenarios are the paper's three experiments plus its QEMU flow.
func Scenarios() []Scenario {
	return []Scenario{
		{
			Name: "base", Title: "RISC-V base-ISA tasks, riscv64-only images", PaperStock: 0.62,
			Needs: []string{"RV64I"},
			Pod: func(t Task, _ bool, reg string) *corev1.Pod {
				return taskPod(t, reg+"/paper/base:v1")
			},
		},
		{
			Name: "ext-image", Title: "RISC-V extension tasks, no pod annotation (image declares ISA)", PaperStock: 0.41,
			Needs: ExtensionNeeds,
			Pod: func(t Task, _ bool, reg string) *corev1.Pod {
				return taskPod(t, reg+"/paper/ext:"+strings.ToLower(t.Need))
			},
		},
		{
			Name: "ext-hint", Title: "RISC-V extension tasks with a RISC-V hint (isamatch: isa.request)", PaperStock: 0.67,
			Needs: ExtensionNeeds,
			Pod: func(t Task, isamatch bool, reg string) *corev1.Pod {
				p := taskPod(t, reg+"/paper/base:v1")
				p.Spec.NodeSelector = map[string]string{corev1.LabelArchStable: "riscv64"}
				if isamatch {
					p.Annotations = map[string]string{isa.BareRequestAnnotation: t.Need}
				}
				return p
			},
		},
		{
			Name: "qemu", Title: "cross-compile tasks, isa.qemu: rv64imfdv (paper's QEMU flow)", PaperStock: -1,
			Needs: []string{"RV64IMFDV"}, Emulation: true,
			Pod: func(t Task, isamatch bool, reg string) *corev1.Pod {
				p := taskPod(t, reg+"/paper/cross:v1")
				if isamatch {
					p.Annotations = map[string]string{isa.BareQEMUAnnotation: strings.ToLower(t.Need)}
				}
				return p
			},
		},
	}
}

func taskPod(t Task, image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: t.Name, Labels: map[string]string{"app": "isamatch-experiment", "kind": t.Kind}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "task",
				Image: image,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    *resource.NewMilliQuantity(t.MilliCPU, resource.DecimalSI),
					corev1.ResourceMemory: *resource.NewQuantity(t.MemMi<<20, resource.BinarySI),
				}},
			}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
}
