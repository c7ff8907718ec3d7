package actor

import (
	"testing"

	"github.com/asynkron/protoactor-go/remote"
	"github.com/stretchr/testify/require"
)

// The queue of frames that protoactor-go keeps for each node it writes
// to starts small (it grows as frames wait): its default start, 1 000 000
// slots, is 16 MB of interfaces that every garbage collection scans.
func TestWriterQueueStartsSmall(t *testing.T) {
	opts, err := grpcOptions(NodeConfig{})
	require.NoError(t, err)
	cfg := remote.Configure("127.0.0.1", 0, opts...)
	require.Equal(t, writerQueue, cfg.EndpointWriterQueueSize)
	require.Equal(t, writerBatch, cfg.EndpointWriterBatchSize)
}

// A socket's frame is encoded into a buffer with room for it, empty; a
// buffer given back serves a later frame, unless it is long.
func TestSockFrameBufHasRoom(t *testing.T) {
	bp := sockFrameBuf(1000)
	require.Zero(t, len(*bp))
	require.GreaterOrEqual(t, cap(*bp), 1000)
	*bp = append(*bp, 1, 2, 3)[:0]
	putSockFrameBuf(bp)
	bp = sockFrameBuf(5000)
	require.Zero(t, len(*bp))
	require.GreaterOrEqual(t, cap(*bp), 5000)

	long := sockFrameBuf(maxPooledFrame + 1)
	for range 100 { // the pool may drop what it is given, never keeps what it is not
		putSockFrameBuf(long)
		got := sockFrameBuf(10)
		require.LessOrEqual(t, cap(*got), maxPooledFrame, "a long buffer came back from the pool")
	}
}
