package comlib

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSelectFileReloadedWhenItChanges: a -comlibselect file is parsed once
// while it stays as it is, and again once it changes (its size, or only
// its modification time): a later job of the process gets the new tree.
func TestSelectFileReloadedWhenItChanges(t *testing.T) {
	file := filepath.Join(t.TempDir(), "select.json")
	first := `{"msg_size=any": {"strategy=direct": {}}}`
	second := `{"msg_size=any": {"router=tree": {"degree=3": {}}}}`
	third := `{"msg_size=any": {"router=tree": {"degree=4": {}}}}` // as long as second
	require.Len(t, third, len(second))
	load := func() string {
		t.Helper()
		tr, err := loadSelectFlag(file)
		require.NoError(t, err)
		b, err := tr.MarshalJSON()
		require.NoError(t, err)
		return string(b)
	}
	require.NoError(t, os.WriteFile(file, []byte(first), 0o644))
	a := load()
	require.Contains(t, a, "strategy=direct")
	before := selectionParses.Load()
	require.Equal(t, a, load(), "the same file")
	require.Equal(t, before, selectionParses.Load(), "an unchanged file is parsed again")

	require.NoError(t, os.WriteFile(file, []byte(second), 0o644))
	b := load()
	require.Contains(t, b, "degree=3", "the file changed size")

	fi, err := os.Stat(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, []byte(third), 0o644))
	// Same size; a modification time surely apart from the last one.
	require.NoError(t, os.Chtimes(file, time.Time{}, fi.ModTime().Add(time.Minute)))
	c := load()
	require.True(t, strings.Contains(c, "degree=4"), "the file changed, its size did not: %s", c)
}
