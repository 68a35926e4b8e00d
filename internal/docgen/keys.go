package docgen

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// KeysFile is the file of pkg/isa that defines every key isamatch reads or
// writes; its exported constants and functions are the keys reference.
const KeysFile = "keys.go"

// A Key is one label, annotation, gate, image-label or environment key.
type Key struct {
	Name  string // the Go identifier in pkg/isa
	Value string // the key, "<arch>" where a function fills it in
	Doc   string // the doc comment, one line
}

// Keys reads the Go package in dir (pkg/isa) and returns the exported
// constants and functions of its KeysFile, and every exported constant
// named *Prefix of the package, sorted by value. Each constant's value is
// evaluated from the source (string literals, other constants and +).
func Keys(dir string) ([]Key, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		files = append(files, f)
	}
	consts := stringConsts(files)
	pkg, err := doc.NewFromFiles(fset, files, "github.com/isamatch/isamatch/pkg/isa", doc.PreserveAST)
	if err != nil {
		return nil, fmt.Errorf("read doc of %s: %w", dir, err)
	}
	inKeys := func(p token.Pos) bool { return filepath.Base(fset.Position(p).Filename) == KeysFile }
	var out []Key
	for _, v := range pkg.Consts {
		out = append(out, constKeys(v, consts, inKeys(v.Decl.Pos()))...)
	}
	for _, f := range pkg.Funcs {
		if !inKeys(f.Decl.Pos()) {
			continue
		}
		out = append(out, Key{Name: f.Name + "()", Value: funcValue(f.Decl, consts), Doc: oneLine(f.Doc)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no key in %s/%s", dir, KeysFile)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Value != out[j].Value {
			return out[i].Value < out[j].Value
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// constKeys returns the keys one const declaration defines: all of them
// when it is in KeysFile, else only those named *Prefix. A name without a
// comment of its own takes the previous name's comment when that comment
// names it ("A and B are ..."), else the declaration's.
func constKeys(v *doc.Value, consts map[string]string, all bool) []Key {
	var out []Key
	prev := ""
	for _, s := range v.Decl.Specs {
		vs := s.(*ast.ValueSpec)
		text := strings.TrimSpace(vs.Doc.Text() + " " + vs.Comment.Text())
		for _, n := range vs.Names {
			d := text
			if d == "" && strings.Contains(prev, n.Name) {
				d = prev
			}
			if d == "" {
				d = v.Doc
			}
			if n.IsExported() && (all || strings.HasSuffix(n.Name, "Prefix")) {
				out = append(out, Key{Name: n.Name, Value: consts[n.Name], Doc: oneLine(d)})
			}
		}
		if text != "" {
			prev = text
		}
	}
	return out
}

// stringConsts evaluates every package-level constant of files whose
// value is made of string literals, other such constants and +.
func stringConsts(files []*ast.File) map[string]string {
	exprs := map[string]ast.Expr{}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						exprs[n.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	out := map[string]string{}
	for name, e := range exprs {
		if v, ok := eval(e, exprs, nil); ok {
			out[name] = v
		}
	}
	return out
}

// eval evaluates a string expression. An identifier that is no constant
// is a parameter when params holds it, rendered "<name>".
func eval(e ast.Expr, exprs map[string]ast.Expr, params map[string]bool) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.Ident:
		if params[e.Name] {
			return "<" + e.Name + ">", true
		}
		if x, ok := exprs[e.Name]; ok {
			return eval(x, exprs, params)
		}
	case *ast.ParenExpr:
		return eval(e.X, exprs, params)
	case *ast.CallExpr: // a conversion such as string(a)
		if len(e.Args) == 1 {
			return eval(e.Args[0], exprs, params)
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			x, ok1 := eval(e.X, exprs, params)
			y, ok2 := eval(e.Y, exprs, params)
			return x + y, ok1 && ok2
		}
	}
	return "", false
}

// funcValue is the key a one-line key function returns, its parameters
// as <name>; "" when the body is not a single return of a string.
func funcValue(fn *ast.FuncDecl, consts map[string]string) string {
	if fn.Body == nil || len(fn.Body.List) != 1 {
		return ""
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return ""
	}
	params := map[string]bool{}
	for _, f := range fn.Type.Params.List {
		for _, n := range f.Names {
			params[n.Name] = true
		}
	}
	exprs := map[string]ast.Expr{}
	for name, v := range consts {
		exprs[name] = &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(v)}
	}
	v, _ := eval(ret.Results[0], exprs, params)
	return v
}

// KeysPage renders keys as the Markdown page docs/reference/keys.md.
func KeysPage(keys []Key) []byte {
	var b strings.Builder
	b.WriteString(Header("Keys: labels, annotations, gate", "pkg/isa/"+KeysFile))
	b.WriteString("Every key isamatch reads or writes, defined once in `pkg/isa/" + KeysFile + "` (and the label prefixes), with its doc comment. " +
		"Per-extension node labels are a prefix plus `<family>.<extension>`; [labels.md](../labels.md) explains the schema.\n\n")
	b.WriteString("| key | Go name | meaning |\n|---|---|---|\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "| %s | `isa.%s` | %s |\n", code(k.Value), k.Name, cell(k.Doc))
	}
	return []byte(b.String())
}

// oneLine joins a doc comment's lines into one.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
