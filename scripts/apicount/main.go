// Command apicount counts the exported names of Go packages: top-level
// functions, types, variables and constants, and the exported methods of
// exported types (test files are left out), including those an exported
// alias of a type of another package of the module brings (type T = core.T
// shows core.T's methods). It measures how much API a
// package offers, so that the figures in docs/design/packages.md can be
// measured again:
//
//	go run ./scripts/apicount chare array group lb tram comlib location actor
//
// Each argument is a package directory; the output has a line per
// package: its top-level names, its methods and their sum.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: apicount dir...")
		os.Exit(2)
	}
	failed := false
	for _, dir := range os.Args[1:] {
		counts, err := countDir(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "apicount: %s: %v\n", dir, err)
			failed = true
			continue
		}
		for _, c := range counts {
			fmt.Printf("%-28s top=%-4d methods=%-4d total=%d\n", c.name, c.top, c.methods, c.top+c.methods)
		}
	}
	if failed {
		os.Exit(1)
	}
}

// count is one package's exported names.
type count struct {
	name         string // the directory, and the package if it holds several
	top, methods int
}

// parseDir parses the packages in dir, test files left out.
func parseDir(dir string) (map[string]*ast.Package, error) {
	return parser.ParseDir(token.NewFileSet(), dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.SkipObjectResolution)
}

// countDir counts the exported names of the packages in dir.
func countDir(dir string) ([]count, error) {
	pkgs, err := parseDir(dir)
	if err != nil {
		return nil, err
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("no Go package")
	}
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []count
	for _, n := range names {
		c := count{name: filepath.Clean(dir)}
		if len(pkgs) > 1 {
			c.name += " (" + n + ")"
		}
		for _, f := range pkgs[n].Files {
			for _, d := range f.Decls {
				top, meth := exported(d)
				c.top += top
				c.methods += meth
				m, err := aliasMethods(dir, f, d)
				if err != nil {
					return nil, err
				}
				c.methods += m
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// exported counts the exported top-level names and methods that one
// declaration declares.
func exported(d ast.Decl) (top, methods int) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return 0, 0
		}
		if d.Recv == nil {
			return 1, 0
		}
		if id, ok := receiverType(d.Recv.List[0].Type).(*ast.Ident); ok && id.IsExported() {
			return 0, 1
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					top++
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() {
						top++
					}
				}
			}
		}
	}
	return top, 0
}

// aliasMethods counts the exported methods that an exported alias of a
// type of another package of the module (type T = core.T) brings: a
// program sees them through the alias, though they are declared there.
func aliasMethods(dir string, f *ast.File, d ast.Decl) (int, error) {
	gd, ok := d.(*ast.GenDecl)
	if !ok || gd.Tok != token.TYPE {
		return 0, nil
	}
	n := 0
	for _, s := range gd.Specs {
		ts := s.(*ast.TypeSpec)
		if !ts.Assign.IsValid() || !ts.Name.IsExported() {
			continue
		}
		sel, ok := receiverType(ts.Type).(*ast.SelectorExpr)
		if !ok {
			continue
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok {
			continue
		}
		target, err := importDir(dir, f, pkg.Name)
		if err != nil || target == "" {
			return 0, err
		}
		methods, err := methodsOf(target)
		if err != nil {
			return 0, err
		}
		n += methods[sel.Sel.Name]
	}
	return n, nil
}

// importDir is the directory of the package that f imports as name, if
// it is a package of the module that holds dir, or "".
func importDir(dir string, f *ast.File, name string) (string, error) {
	root, mod, err := module(dir)
	if err != nil {
		return "", err
	}
	for _, im := range f.Imports {
		path := strings.Trim(im.Path.Value, `"`)
		if (im.Name != nil && im.Name.Name != name) || (im.Name == nil && filepath.Base(path) != name) {
			continue
		}
		if rest, ok := strings.CutPrefix(path, mod+"/"); ok {
			return filepath.Join(root, filepath.FromSlash(rest)), nil
		}
	}
	return "", nil
}

// module finds the go.mod above dir: its directory and module path.
func module(dir string) (root, path string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if p, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					return d, strings.TrimSpace(p), nil
				}
			}
			return "", "", fmt.Errorf("%s: no module line", filepath.Join(d, "go.mod"))
		}
		if filepath.Dir(d) == d {
			return "", "", fmt.Errorf("no go.mod above %s", abs)
		}
	}
}

// methodsOf counts the exported methods of each exported type of the
// package in dir.
func methodsOf(dir string) (map[string]int, error) {
	pkgs, err := parseDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv == nil || !fd.Name.IsExported() {
					continue
				}
				if id, ok := receiverType(fd.Recv.List[0].Type).(*ast.Ident); ok && id.IsExported() {
					out[id.Name]++
				}
			}
		}
	}
	return out, nil
}

// receiverType strips a method receiver's pointer and type parameters.
func receiverType(t ast.Expr) ast.Expr {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		default:
			return t
		}
	}
}
