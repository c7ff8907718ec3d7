package comlib

import (
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestParsedTreesDoNotKeepTheText: the trees of AutoSpecs parsed once per
// process are found by a digest of their text, not the text itself, which
// may be megabytes: once nothing else holds the text, it is collected.
func TestParsedTreesDoNotKeepTheText(t *testing.T) {
	text := `{"msg_size=any": {"strategy=direct": {}}}` + strings.Repeat(" ", 1<<20)
	collected := make(chan struct{})
	runtime.AddCleanup(unsafe.StringData(text), func(ch chan struct{}) { close(ch) }, collected)
	tr, err := parseTree(text)
	require.NoError(t, err)
	again, err := parseTree(strings.Clone(text))
	require.NoError(t, err)
	require.Same(t, tr, again, "the same text is parsed once")
	text = ""
	deadline := time.After(10 * time.Second)
	for {
		runtime.GC()
		select {
		case <-collected:
			return
		case <-deadline:
			t.Fatal("the text of a parsed tree is still held after 10s")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
