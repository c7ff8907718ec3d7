//go:build unix

package launcher

import (
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The descriptor path: a socket pair stands for the one Hydra hands down.
func TestPMIKVSNameOverAnInheritedSocket(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	srvFile := os.NewFile(uintptr(fds[1]), "server")
	server, err := net.FileConn(srvFile)
	require.NoError(t, err)
	srvFile.Close()
	seen := fakePMI(server, hydraAnswers)

	name, err := PMIKVSName(MapEnv(map[string]string{"PMI_FD": strconv.Itoa(fds[0])}))
	require.NoError(t, err)
	require.Equal(t, "kvs_1178_0_1081193949_vm", name)
	select {
	case got := <-seen:
		require.Len(t, got, 3)
	case <-time.After(10 * time.Second):
		t.Fatal("the fake PMI server did not finish")
	}
	var st syscall.Stat_t
	require.Error(t, syscall.Fstat(fds[0], &st), "PMI_FD is closed after the conversation")
}
