package tram

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
)

// TestResolveDelegateKeepsOnlyKnownGroups: a delegate reference from the
// wire that names a collection this process does not know gets an object
// of its own, which the process does not keep (ids from the network would
// otherwise fill the table for the life of the job).
func TestResolveDelegateKeepsOnlyKnownGroups(t *testing.T) {
	job := &chare.Job{}
	count := func() int {
		n := 0
		delegates.Range(func(k, _ any) bool {
			if k.(delegateKey).job == job {
				n++
			}
			return true
		})
		return n
	}
	for id := range chare.CollID(100) {
		d := resolveDelegate(job, id<<32|7)
		require.NotNil(t, d)
		require.Equal(t, id<<32|7, d.g.Route().Coll)
	}
	require.Zero(t, count(), "delegates kept for collections this process does not know")
}
