package chare_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
	"github.com/stretchr/testify/require"
)

// The types of package chare are aliases of the runtime's (internal/core),
// and go doc shows no methods for an alias: each alias's doc comment lists
// its type's methods instead. This test keeps that list complete.
func TestFacadeDocListsMethods(t *testing.T) {
	fset := token.NewFileSet()
	methods := map[string][]string{} // receiver type -> exported methods
	coreDecls(t, fset, func(d ast.Decl) {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && fd.Name.IsExported() {
			r := recvName(fd.Recv.List[0].Type)
			methods[r] = append(methods[r], fd.Name.Name)
		}
	})
	aliases := 0
	eachAlias(t, fset, func(ts *ast.TypeSpec, doc string) {
		aliases++
		for _, m := range methods[ts.Name.Name] {
			require.Contains(t, doc, ") "+m+"(", "the doc comment of chare.%s does not list its method %s", ts.Name.Name, m)
		}
	})
	require.Greater(t, aliases, 10, "chare.go should hold the aliases of the program's types")
}

// coreDecls parses internal/core's non-test files and calls fn with each
// top-level declaration.
func coreDecls(t *testing.T, fset *token.FileSet, fn func(ast.Decl)) {
	t.Helper()
	files, err := filepath.Glob("../internal/core/*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn(d)
		}
	}
}

// eachAlias calls fn with each type alias of chare.go and its doc comment.
func eachAlias(t *testing.T, fset *token.FileSet, fn func(ts *ast.TypeSpec, doc string)) {
	t.Helper()
	f, err := parser.ParseFile(fset, "chare.go", nil, parser.ParseComments|parser.SkipObjectResolution)
	require.NoError(t, err)
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, s := range gd.Specs {
			if ts := s.(*ast.TypeSpec); ts.Assign.IsValid() {
				fn(ts, gd.Doc.Text()+ts.Doc.Text())
			}
		}
	}
}

// recvName is the type name of a method's receiver: T of T, *T, T[P] or *T[P].
func recvName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// go doc shows no fields of an aliased struct nor methods of an aliased
// interface either: each alias's doc comment writes out the type (its
// exported fields, or its exported methods, with their types). This test
// fails if one of them is missing from the comment.
func TestFacadeDocListsFields(t *testing.T) {
	fset := token.NewFileSet()
	specs := map[string]*ast.TypeSpec{}
	coreDecls(t, fset, func(d ast.Decl) {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
			for _, s := range gd.Specs {
				specs[s.(*ast.TypeSpec).Name.Name] = s.(*ast.TypeSpec)
			}
		}
	})
	print := func(n ast.Node) string {
		var b bytes.Buffer
		require.NoError(t, printer.Fprint(&b, fset, n))
		return b.String()
	}
	checked := 0
	eachAlias(t, fset, func(ts *ast.TypeSpec, doc string) {
		spec := specs[ts.Name.Name]
		require.NotNil(t, spec, "chare.%s aliases no type of internal/core of its name", ts.Name.Name)
		lines := map[string]bool{} // the doc's lines, spaces collapsed, comments dropped
		for _, l := range strings.Split(doc, "\n") {
			l = strings.Join(strings.Fields(l), " ")
			if i := strings.Index(l, " //"); i > 0 {
				l = l[:i]
			}
			lines[l] = true
		}
		var fields *ast.FieldList
		iface := false
		switch x := spec.Type.(type) {
		case *ast.StructType:
			fields = x.Fields
		case *ast.InterfaceType:
			fields, iface = x.Methods, true
		default:
			return
		}
		for _, fd := range fields.List {
			typ := strings.Join(strings.Fields(print(fd.Type)), " ")
			var names []string
			for _, n := range fd.Names {
				if n.IsExported() {
					names = append(names, n.Name)
				}
			}
			var want string
			switch {
			case len(fd.Names) == 0: // embedded
				base := typ[strings.LastIndex(typ, ".")+1:]
				if !ast.IsExported(strings.TrimPrefix(base, "*")) {
					continue
				}
				want = typ
			case len(names) == 0:
				continue
			case iface:
				want = names[0] + strings.TrimPrefix(typ, "func")
			default:
				want = strings.Join(names, ", ") + " " + typ
			}
			checked++
			require.True(t, lines[want], "the doc comment of chare.%s does not list %q", ts.Name.Name, want)
		}
	})
	require.Greater(t, checked, 30, "chare.go should alias structs and interfaces with exported fields and methods")
}

// The constants that chare re-exports say their values: a literal equal to
// the runtime's, or "N:" at the start of their comment.
func TestFacadeConstantValues(t *testing.T) {
	require.Equal(t, core.AnyPE, chare.AnyPE)
	require.Equal(t, core.CheckpointFile, chare.CheckpointFile)
	values := map[string]int{
		"CallbackIgnore": int(chare.CallbackIgnore), "CallbackEntry": int(chare.CallbackEntry),
		"CallbackFuture": int(chare.CallbackFuture), "CallbackFunc": int(chare.CallbackFunc),
		"CallbackExit": int(chare.CallbackExit),
		"KindNone":     int(chare.KindNone), "KindChare": int(chare.KindChare), "KindBranch": int(chare.KindBranch),
		"KindGroupAll": int(chare.KindGroupAll), "KindElement": int(chare.KindElement),
		"KindArrayAll": int(chare.KindArrayAll), "KindSection": int(chare.KindSection),
		"HeadroomBytes": chare.HeadroomBytes,
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "chare.go", nil, parser.ParseComments|parser.SkipObjectResolution)
	require.NoError(t, err)
	number := regexp.MustCompile(`^(-?[0-9]+): `)
	seen := 0
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for _, n := range vs.Names {
				if _, fwd := vs.Values[0].(*ast.SelectorExpr); !fwd {
					continue // a literal, checked above
				}
				m := number.FindStringSubmatch(vs.Comment.Text())
				require.NotNil(t, m, "chare.%s should start its comment with its value (\"N: ...\")", n.Name)
				v, err := strconv.Atoi(m[1])
				require.NoError(t, err)
				want, ok := values[n.Name]
				require.True(t, ok, "TestFacadeConstantValues does not know chare.%s", n.Name)
				require.Equal(t, want, v, "the comment of chare.%s gives the wrong value", n.Name)
				seen++
			}
		}
	}
	require.Equal(t, len(values), seen)
}
