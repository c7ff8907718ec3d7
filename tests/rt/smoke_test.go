package rt_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
)

type smokeMain struct {
	chare.Chare[smokeMain]
	got int
}

type smokeElem struct {
	array.Element[smokeElem, int]
}

type hiMsg struct{ Main chare.Proxy[smokeMain] }

func (e *smokeElem) Hi(m hiMsg) {
	_ = e.Contribute(e.ThisIndex(), sumInt{}, chare.EntryCallback(m.Main, (*smokeMain).Done))
}

func (m *smokeMain) Done(sum int) {
	m.got = sum
	if sum == 16*15/2 {
		m.Exit(0)
	} else {
		m.Exit(3)
	}
}

func init() {
	chare.Register[smokeElem]()
	chare.Register[smokeMain]()
}

func TestSmokeHelloSum(t *testing.T) {
	for _, pes := range []int{1, 3, 4} {
		t.Run(fmt.Sprintf("%dPEs", pes), func(t *testing.T) {
			code := run(t, pes, func(m *smokeMain, _ []string) {
				a, err := array.New[smokeElem](m, array.Dims(16))
				inJob.NoError(err)
				inJob.NoError(chare.Send(m, a, (*smokeElem).Hi, hiMsg{m.ThisProxy()}))
			})
			require.Equal(t, 0, code, "PEs=%d", pes)
		})
	}
}
