package chare_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The types of package chare are aliases of the runtime's (internal/core),
// and go doc shows no methods for an alias: each alias's doc comment lists
// its type's methods instead. This test keeps that list complete.
func TestFacadeDocListsMethods(t *testing.T) {
	fset := token.NewFileSet()
	methods := map[string][]string{} // receiver type -> exported methods
	files, err := filepath.Glob("../internal/core/*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, fn := range files {
		if strings.HasSuffix(fn, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, fn, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() {
				continue
			}
			methods[recvName(fd.Recv.List[0].Type)] = append(methods[recvName(fd.Recv.List[0].Type)], fd.Name.Name)
		}
	}
	f, err := parser.ParseFile(fset, "chare.go", nil, parser.ParseComments|parser.SkipObjectResolution)
	require.NoError(t, err)
	aliases := 0
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, s := range gd.Specs {
			ts := s.(*ast.TypeSpec)
			if !ts.Assign.IsValid() {
				continue
			}
			aliases++
			doc := gd.Doc.Text() + ts.Doc.Text()
			for _, m := range methods[ts.Name.Name] {
				require.Contains(t, doc, ") "+m+"(", "the doc comment of chare.%s does not list its method %s", ts.Name.Name, m)
			}
		}
	}
	require.Greater(t, aliases, 10, "chare.go should hold the aliases of the program's types")
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
