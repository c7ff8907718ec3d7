package extest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRunPattern(t *testing.T) {
	require.Equal(t, "^TestHelloTwoProcesses$", runPattern("TestHelloTwoProcesses"))
	require.Equal(t, `^TestX$/^pes=4\.n$`, runPattern("TestX/pes=4.n"))
}

func TestBufferConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { fmt.Fprintf(&b, "%d\n", i) })
	}
	wg.Wait()
	require.Len(t, b.String(), 16)
}
