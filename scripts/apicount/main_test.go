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
