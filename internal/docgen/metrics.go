package docgen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// A Metric is one Prometheus metric a package of the repository declares.
type Metric struct {
	Name    string // the full name: namespace, subsystem and name joined by _
	Type    string // counter, gauge, histogram or summary
	Help    string
	Labels  []string // variable labels, then constant labels, as declared
	Package string   // the directory that declares it, relative to the root
}

// optsTypes maps the client libraries' options types to metric types:
// prometheus.CounterOpts and k8s.io/component-base/metrics.CounterOpts
// alike.
var optsTypes = map[string]string{
	"CounterOpts":   "counter",
	"GaugeOpts":     "gauge",
	"HistogramOpts": "histogram",
	"SummaryOpts":   "summary",
}

// skipDirs are never read: other people's code, fixtures, caches.
var skipDirs = map[string]bool{"vendor": true, "testdata": true, ".git": true, ".cache": true, "node_modules": true, "bin": true, "dist": true}

// Metrics walks the Go sources (tests excluded) under root and returns
// every metric declared by a New* call whose first argument is an options
// literal (prometheus.CounterOpts{...}, &metrics.GaugeOpts{...}), with the
// labels of its second argument when that is a []string literal, sorted by
// name. Name, Namespace, Subsystem and Help must be string literals or
// constants of the same file.
func Metrics(root string) ([]Metric, error) {
	var out []Metric
	err := walkSource(root, func(path string) error {
		ms, err := fileMetrics(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for i := range ms {
			ms[i].Package = filepath.ToSlash(rel)
		}
		out = append(out, ms...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read metrics under %s: %w", root, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			return nil, fmt.Errorf("metric %s declared twice (%s, %s)", out[i].Name, out[i-1].Package, out[i].Package)
		}
	}
	return out, nil
}

// fileMetrics returns the metrics one file declares.
func fileMetrics(path string) ([]Metric, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	consts := stringConsts([]*ast.File{f})
	exprs := map[string]ast.Expr{}
	for name, v := range consts {
		exprs[name] = &ast.BasicLit{Kind: token.STRING, Value: fmt.Sprintf("%q", v)}
	}
	var out []Metric
	var bad error
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		lit, typ := optsLiteral(call.Args[0])
		if lit == nil {
			return true
		}
		m := Metric{Type: typ}
		var parts [3]string // namespace, subsystem, name
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, _ := kv.Key.(*ast.Ident)
			if key == nil {
				continue
			}
			switch key.Name {
			case "Namespace", "Subsystem", "Name", "Help":
				v, ok := eval(kv.Value, exprs, nil)
				if !ok {
					bad = fmt.Errorf("%s: %s of a metric is not a constant string", path, key.Name)
					return false
				}
				switch key.Name {
				case "Namespace":
					parts[0] = v
				case "Subsystem":
					parts[1] = v
				case "Name":
					parts[2] = v
				case "Help":
					m.Help = v
				}
			}
		}
		if len(call.Args) > 1 {
			m.Labels = append(m.Labels, stringSlice(call.Args[1], exprs)...)
		}
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				if key, _ := kv.Key.(*ast.Ident); key != nil && key.Name == "ConstLabels" {
					m.Labels = append(m.Labels, mapKeys(kv.Value, exprs)...)
				}
			}
		}
		var name []string
		for _, p := range parts {
			if p != "" {
				name = append(name, p)
			}
		}
		m.Name = strings.Join(name, "_")
		out = append(out, m)
		return true
	})
	return out, bad
}

// optsLiteral returns e (or what &e points to) when it is a literal of
// one of the optsTypes, and the metric type.
func optsLiteral(e ast.Expr) (*ast.CompositeLit, string) {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, ""
	}
	typ, ok := optsTypes[calleeName(lit.Type)]
	if !ok {
		return nil, ""
	}
	return lit, typ
}

// calleeName is the last identifier of x or pkg.x.
func calleeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// stringSlice evaluates a []string{...} literal.
func stringSlice(e ast.Expr, exprs map[string]ast.Expr) []string {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var out []string
	for _, el := range lit.Elts {
		if v, ok := eval(el, exprs, nil); ok {
			out = append(out, v)
		}
	}
	return out
}

// mapKeys returns the constant keys of a map literal, sorted.
func mapKeys(e ast.Expr, exprs map[string]ast.Expr) []string {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var out []string
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if v, ok := eval(kv.Key, exprs, nil); ok {
				out = append(out, v)
			}
		}
	}
	sort.Strings(out)
	return out
}

// MetricsPage renders metrics as the Markdown page docs/reference/metrics.md.
func MetricsPage(metrics []Metric) []byte {
	var b strings.Builder
	b.WriteString(Header("Metrics", "the Prometheus options literals of every package"))
	b.WriteString("Every metric isamatch's code declares, by name. `package` is the directory that declares it: " +
		"`pkg/labeler` and `cmd/labeler` are the labeler's, `rebalance/` the rebalancer's, `internal/buildinfo` every binary's, the rest the webhook's. " +
		"[observability.md](../observability.md) says how to scrape them and what each means in operation.\n\n")
	b.WriteString("| metric | type | labels | help | package |\n|---|---|---|---|---|\n")
	for _, m := range metrics {
		labels := ""
		if len(m.Labels) > 0 {
			labels = "`" + strings.Join(m.Labels, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | `%s` |\n", m.Name, m.Type, labels, cell(m.Help), m.Package)
	}
	return []byte(b.String())
}

// walkSource calls fn with the path of every non-test Go file under root,
// skipping skipDirs and hidden directories.
func walkSource(root string, fn func(path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		return fn(path)
	})
}
