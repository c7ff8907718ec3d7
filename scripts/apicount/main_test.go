package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCountDir(t *testing.T) {
	dir := t.TempDir()
	src := `package p

type T struct{}
type G[K any] struct{}
type hidden struct{}

const A, b = 1, 2
var V int

func F() {}
func f() {}
func (T) M() {}
func (*T) N() {}
func (T) m() {}
func (G[K]) M() {}
func (hidden) M() {}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc Extra() {}\n"), 0o600))
	got, err := countDir(dir)
	require.NoError(t, err)
	require.Equal(t, []count{{name: filepath.Clean(dir), top: 5, methods: 3}}, got)
}

func TestCountDirNoPackage(t *testing.T) {
	_, err := countDir(t.TempDir())
	require.ErrorContains(t, err, "no Go package")
}

// An alias of a type of another package of the module brings that type's
// exported methods with it.
func TestCountDirAliasBringsMethods(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n\ngo 1.26\n"), 0o600))
	for dir, src := range map[string]string{
		"in":  "package in\n\ntype T struct{}\ntype U struct{}\n\nfunc (T) A() {}\nfunc (*T) B() {}\nfunc (T) c() {}\nfunc (U) D() {}\n",
		"out": "package out\n\nimport \"example.com/m/in\"\n\ntype T = in.T\ntype v = in.U\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, dir), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(root, dir, dir+".go"), []byte(src), 0o600))
	}
	got, err := countDir(filepath.Join(root, "out"))
	require.NoError(t, err)
	require.Equal(t, []count{{name: filepath.Join(root, "out"), top: 1, methods: 2}}, got)
}
