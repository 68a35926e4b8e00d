package docgen

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite docs/reference/ from the code instead of comparing")

// root is the repository root, from this package's directory.
const root = "../.."

func TestReferenceKeys(t *testing.T) {
	keys, err := Keys(filepath.Join(root, "pkg", "isa"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Key{}
	for _, k := range keys {
		byName[k.Name] = k
	}
	// A few keys every user meets, with the value and comment the code gives.
	for _, want := range []Key{
		{Name: "RequestAnnotation", Value: "isa.isamatch.io/request", Doc: "RequestAnnotation is the ISA the pod needs natively."},
		{Name: "BareQEMUAnnotation", Value: "isa.qemu", Doc: "BareRequestAnnotation and BareQEMUAnnotation are the paper's spellings."},
		{Name: "EmuExecLabel()", Value: "qemu.isamatch.io/binfmt.<a>"},
		{Name: "NativePrefix", Value: "isa.isamatch.io/"},
	} {
		got := byName[want.Name]
		if want.Doc == "" {
			got.Doc = ""
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("key %s (-want +got):\n%s", want.Name, diff)
		}
	}
	for _, k := range keys {
		if k.Value == "" || k.Doc == "" {
			t.Errorf("key %s: value %q, doc %q: every key needs both", k.Name, k.Value, k.Doc)
		}
	}
	if err := Check(filepath.Join(root, "docs", "reference", "keys.md"), KeysPage(keys), *update); err != nil {
		t.Error(err)
	}
}

func TestReferenceMetrics(t *testing.T) {
	metrics, err := Metrics(root)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]Metric{}
	for _, m := range metrics {
		names[m.Name] = m
		if m.Help == "" || !strings.HasPrefix(m.Name, "isamatch_") {
			t.Errorf("metric %q in %s: want a name isamatch_* and a help text", m.Name, m.Package)
		}
	}
	// Every isamatch_* name spelled in the code (alerts' inputs, tests'
	// probes) is a metric the reference lists, or a prefix of some.
	for _, name := range metricLiterals(t) {
		if _, ok := names[name]; ok || hasPrefix(metrics, name+"_") {
			continue
		}
		t.Errorf("%q is spelled in the code but no metric declares it: the parser missed a declaration", name)
	}
	want := Metric{Name: "isamatch_webhook_decisions_total", Type: "counter", Help: "Pod admissions handled by the isamatch webhook, by outcome.", Labels: []string{"outcome"}, Package: "pkg/mutate"}
	if diff := cmp.Diff(want, names[want.Name]); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := names["isamatch_rebalancer_cycles_total"]; got.Type != "counter" || got.Package != "rebalance/cmd/rebalancer" {
		t.Errorf("isamatch_rebalancer_cycles_total = %+v, want the rebalancer's counter", got)
	}
	if err := Check(filepath.Join(root, "docs", "reference", "metrics.md"), MetricsPage(metrics), *update); err != nil {
		t.Error(err)
	}
}

func hasPrefix(ms []Metric, p string) bool {
	for _, m := range ms {
		if strings.HasPrefix(m.Name, p) {
			return true
		}
	}
	return false
}

var metricName = regexp.MustCompile(`^isamatch_[a-z0-9_]+$`)

// metricLiterals returns the string literals of non-test Go code under
// root that look like metric names.
func metricLiterals(t *testing.T) []string {
	t.Helper()
	var out []string
	err := walkSource(root, func(path string) error {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && metricName.MatchString(s) {
					out = append(out, s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no isamatch_* literal found: wrong root?")
	}
	return out
}

func TestCheckReportsDrift(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ref.md")
	if err := Check(path, []byte("a\nb\n"), true); err != nil {
		t.Fatal(err)
	}
	if err := Check(path, []byte("a\nb\n"), false); err != nil {
		t.Errorf("same bytes: %v", err)
	}
	err := Check(path, []byte("a\nc\n"), false)
	if err == nil {
		t.Fatal("drift not reported")
	}
	for _, want := range []string{"line 2", `"b"`, `"c"`, RegenerateCommand} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %s", err, want)
		}
	}
}

func TestFlagTable(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("b", "", "a | b\n  more")
	fs.Int("a", 3, "count")
	got := string(FlagTable("x flags", "cmd/x", "", FlagsOf(fs)))
	want := Header("x flags", "cmd/x") + "| flag | default | meaning |\n|---|---|---|\n" +
		"| `--a` | `3` | count |\n" +
		"| `--b` | (empty) | a \\| b more |\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRemovedFlagsSection(t *testing.T) {
	got := string(RemovedFlagsSection("Set the field instead.", "XConfiguration",
		[]RemovedFlag{{Name: "gate-timeout", Field: "gate.timeout"}, {Name: "a", Field: "b.c"}}))
	want := "\n## Removed flags\n\nSet the field instead.\n\n| removed flag | XConfiguration field |\n|---|---|\n" +
		"| `--gate-timeout` | `gate.timeout` |\n| `--a` | `b.c` |\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
