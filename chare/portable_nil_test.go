package chare_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
)

// nilKind's resolver returns neither a delegate nor an error.
type nilKind struct{ refDelegate }

func (nilKind) DelegateRef() (string, uint64) { return "chare_test.nil", 42 }

func init() {
	chare.RegisterDelegateKind("chare_test.nil", func(*chare.PE, uint64) (chare.Delegate, error) { return nil, nil })
}

// TestPortableResolverReturningNil: a send through a proxy whose
// delegate's resolver returns no delegate (and no error) is an error
// naming the kind and the id, not a panic of the PE.
func TestPortableResolverReturningNil(t *testing.T) {
	var sendErr error
	code, err := chare.Run(chare.Config{PEs: 1, Timeout: 30 * time.Second}, func(m *diMain, _ []string) {
		p, err := viaWire(m.ThisProxy().Delegate(nilKind{}))
		if err != nil {
			m.Abort(err)
			return
		}
		sendErr = chare.Send(m, p, (*diMain).Note, 1)
		m.Exit(0)
	})
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.Error(t, sendErr)
	require.ErrorContains(t, sendErr, `"chare_test.nil"`)
	require.ErrorContains(t, sendErr, "42")
}
