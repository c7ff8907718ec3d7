package actor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseWaitPolicy(t *testing.T) {
	for _, w := range []WaitPolicy{WaitPassive, WaitActive} {
		got, err := ParseWaitPolicy(w.String())
		require.NoError(t, err)
		require.Equal(t, w, got)
	}
	for _, bad := range []string{"", "Active", "spin", "1"} {
		_, err := ParseWaitPolicy(bad)
		require.ErrorContains(t, err, `unknown wait policy "`+bad+`": want active or passive`)
	}
	require.Equal(t, "WaitPolicy(7)", WaitPolicy(7).String())
}

// Config.Wait reaches every mailbox of the runtime, and a policy the
// runtime does not know is refused, naming it.
func TestWaitPolicyReachesTheMailboxes(t *testing.T) {
	for _, w := range []WaitPolicy{WaitPassive, WaitActive} {
		var active, long [3]bool
		rt, err := Start(Config{PEs: 3, Wait: w}, func(pe *PE) {
			// The boot runs on PE 0 once every PE exists, before any
			// PE's goroutine changed its pace.
			for i := range 3 {
				mb := pe.Runtime().PE(i).mb
				active[i], long[i] = mb.active, mb.pace.long
			}
			pe.Runtime().Exit(0)
		})
		require.NoError(t, err)
		code, err := rt.Wait()
		require.NoError(t, err)
		require.Zero(t, code)
		for i := range 3 {
			require.Equal(t, w == WaitActive, active[i], "%v: PE %d", w, i)
			require.Equal(t, w == WaitActive, long[i], "%v: PE %d starts with long spins under WaitActive only", w, i)
		}
	}
	_, err := Start(Config{PEs: 1, Wait: 9}, func(*PE) {})
	require.ErrorContains(t, err, "bad Wait WaitPolicy(9)")
}

// PEs spin on under WaitActive only in a job of one process: in a job of
// several, the other processes' messages come through the network
// poller, which a spinning P does not run.
func TestWaitActiveSpinsInOneProcessOnly(t *testing.T) {
	node := &NodeConfig{Node: 0, Nodes: 2}
	require.True(t, Config{Wait: WaitActive}.spins())
	require.False(t, Config{Wait: WaitActive, Node: node}.spins())
	require.False(t, Config{Wait: WaitPassive}.spins())
	require.False(t, Config{Wait: WaitPassive, Node: node}.spins())
}
