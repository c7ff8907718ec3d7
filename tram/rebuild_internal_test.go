package tram

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/chare"
)

// A delegate branch built again on the same object (a restart builds it in
// Init, then again when its state is restored) retires the run buffer it
// had: sends of a marked method may have kept that buffer
// (core.RunDelegate), and must move to the new one.
func TestRebuiltBranchRetiresItsRunBuffer(t *testing.T) {
	var fail error
	_, err := chare.Run(chare.Config{PEs: 2, Timeout: 30 * time.Second}, func(m *fastMain, _ []string) {
		fail = func() error {
			d, err := NewDelegate(m, Options{})
			if err != nil {
				return err
			}
			quiet := chare.NewFuture[any](m)
			m.DetectQuiescence(quiet.Callback())
			if _, err := quiet.Get(m); err != nil {
				return err
			}
			b := d.local[0].Load()
			if b == nil {
				return errors.New("no branch of the delegate on PE 0")
			}
			before := b.runs
			if err := b.build(b.setup); err != nil {
				return err
			}
			switch {
			case !before.Retired():
				return errors.New("the buffer before the second build is not retired")
			case b.runs == before || b.runs.Retired():
				return errors.New("the branch did not get a new buffer in service")
			case d.RunBuffer(chare.PEOf(m)) != b.runs:
				return errors.New("the delegate does not give PE 0 the new buffer")
			}
			return nil
		}()
		m.Exit(0)
	})
	require.NoError(t, err)
	require.NoError(t, fail)
}
